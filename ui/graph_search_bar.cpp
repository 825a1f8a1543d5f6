#include "ui/graph_search_bar.h"

#include "ui/graph_scene.h"
#include "ui/graph_view.h"

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QToolButton>

#include <algorithm>

namespace qs::ui {

namespace {
QToolButton* makeButton(const QString& text, const QString& toolTip, QWidget* parent) {
    auto* button = new QToolButton(parent);
    button->setText(text);
    button->setToolTip(toolTip);
    button->setAutoRaise(true);
    return button;
}
} // namespace

GraphSearchBar::GraphSearchBar(GraphView& view, QWidget* parent)
    : QWidget(parent)
    , m_view(view)
    , m_field(new QLineEdit(this))
    , m_regex(makeButton(QStringLiteral(".*"), tr("Regular expression"), this))
    , m_status(new QLabel(this)) {
    m_field->setPlaceholderText(tr("Find node by name or op type"));
    m_field->setClearButtonEnabled(true);
    m_field->installEventFilter(this);
    m_regex->setCheckable(true);
    QToolButton* previous =
        makeButton(QStringLiteral("▲"), tr("Previous match (Shift+Enter)"), this);
    QToolButton* next = makeButton(QStringLiteral("▼"), tr("Next match (Enter)"), this);
    QToolButton* close = makeButton(QStringLiteral("✕"), tr("Close (Esc)"), this);
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(6, 3, 6, 3);
    row->addWidget(m_field, 1);
    row->addWidget(m_regex);
    row->addWidget(previous);
    row->addWidget(next);
    row->addWidget(m_status);
    row->addWidget(close);
    m_status->setMinimumWidth(m_status->fontMetrics().horizontalAdvance(tr("Invalid pattern")));
    connect(m_field, &QLineEdit::textChanged, this, &GraphSearchBar::search);
    connect(m_regex, &QToolButton::toggled, this, &GraphSearchBar::search);
    connect(m_field, &QLineEdit::returnPressed, this, &GraphSearchBar::findNext);
    connect(next, &QToolButton::clicked, this, &GraphSearchBar::findNext);
    connect(previous, &QToolButton::clicked, this, &GraphSearchBar::findPrevious);
    connect(close, &QToolButton::clicked, this, &GraphSearchBar::deactivate);
    hide();
}

void GraphSearchBar::activate() {
    show();
    m_field->setFocus();
    m_field->selectAll();
    search();
}

void GraphSearchBar::deactivate() {
    m_view.graphScene()->markMatches({});
    m_matches.clear();
    m_current = -1;
    hide();
    m_view.setFocus();
}

void GraphSearchBar::setQuery(const QString& text, bool regex) {
    const QSignalBlocker blockRegex(m_regex);
    m_regex->setChecked(regex);
    if (m_field->text() == text) {
        search();
    } else {
        m_field->setText(text); // searches through textChanged
    }
}

void GraphSearchBar::findNext() {
    if (!m_hidden.empty()) {
        constexpr size_t kRevealAtOnce = 16; // opening every group of a common word helps no one
        std::vector<uint32_t> items(
            m_hidden.begin(), m_hidden.begin() + static_cast<std::ptrdiff_t>(
                                                     std::min(m_hidden.size(), kRevealAtOnce)));
        Q_EMIT revealRequested(items);
        return;
    }
    step(1);
}

void GraphSearchBar::refresh() {
    search();
}

void GraphSearchBar::findPrevious() {
    step(-1);
}

QString GraphSearchBar::status() const {
    return m_status->text();
}

bool GraphSearchBar::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_field && event->type() == QEvent::KeyPress) {
        const auto* key = static_cast<QKeyEvent*>(event);
        const bool shift = key->modifiers() & Qt::ShiftModifier;
        switch (key->key()) {
        case Qt::Key_Escape:
            deactivate();
            return true;
        case Qt::Key_Return:
        case Qt::Key_Enter:
            if (shift) {
                step(-1);
            } else {
                findNext();
            }
            return true;
        case Qt::Key_Down:
            step(1);
            return true;
        case Qt::Key_Up:
            step(-1);
            return true;
        default:
            break;
        }
    }
    return QWidget::eventFilter(watched, event);
}

QString GraphSearchBar::hiddenNote() const {
    return tr("+%n in collapsed groups (Enter opens them)", nullptr,
              static_cast<int>(m_hidden.size()));
}

void GraphSearchBar::search() {
    const QString text = m_field->text();
    const bool regex = m_regex->isChecked();
    GraphScene* scene = m_view.graphScene();
    m_matches = scene->find(text, regex);
    scene->markMatches(m_matches);
    m_hidden.clear();
    for (uint32_t item : scene->findItems(text, regex)) {
        if (!scene->isItemDrawn(item)) {
            m_hidden.push_back(item);
        }
    }
    m_current = -1;
    if (regex && !text.isEmpty() && !QRegularExpression(text).isValid()) {
        m_status->setText(tr("Invalid pattern"));
        return;
    }
    if (m_matches.empty()) {
        m_status->setText(text.isEmpty()     ? QString()
                          : m_hidden.empty() ? tr("No matches")
                                             : hiddenNote());
        return;
    }
    step(1);
}

void GraphSearchBar::step(int delta) {
    if (m_matches.empty()) {
        return;
    }
    const int count = static_cast<int>(m_matches.size());
    m_current = m_current < 0 ? (delta > 0 ? 0 : count - 1) : (m_current + delta + count) % count;
    m_view.centerOnNode(m_matches[static_cast<size_t>(m_current)]);
    QString text = tr("%1 of %2").arg(m_current + 1).arg(count);
    if (!m_hidden.empty()) {
        text += QStringLiteral(", ") + hiddenNote();
    }
    m_status->setText(text);
}

} // namespace qs::ui
