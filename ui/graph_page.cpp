#include "ui/graph_page.h"

#include "ui/graph_document.h"
#include "ui/graph_scene.h"
#include "ui/graph_search_bar.h"
#include "ui/graph_view.h"
#include "ui/job_runner.h"
#include "ui/rule_hint_bar.h"

#include <QEvent>
#include <QLabel>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <string>

namespace qs::ui {

namespace {
/// The job's Progress, also cancelled when the page starts a newer layout.
class StoppableProgress final : public Progress {
public:
    StoppableProgress(Progress& inner, const std::atomic<bool>& stop)
        : m_inner(inner)
        , m_stop(stop) {}

    void report(double fraction, std::string_view what) override { m_inner.report(fraction, what); }

    bool isCancelled() const override { return m_stop.load() || m_inner.isCancelled(); }

private:
    Progress& m_inner;
    const std::atomic<bool>& m_stop;
};

constexpr int kIdleRefinementDelayMs = 2000;
/// Per group when refining: the user is idle, and any input stops it at once.
constexpr double kRefinementBudgetSeconds = 20.0;
} // namespace

GraphPage::GraphPage(JobRunner& jobs, QWidget* parent)
    : QWidget(parent)
    , m_jobs(jobs)
    , m_scene(new GraphScene(this))
    , m_view(new GraphView(m_scene, this))
    , m_searchBar(new GraphSearchBar(*m_view, this))
    , m_ruleHint(new RuleHintBar(this))
    , m_status(new QLabel(this))
    , m_idleTimer(new QTimer(this)) {
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(0);
    column->addWidget(m_searchBar);
    column->addWidget(m_ruleHint);
    column->addWidget(m_status);
    column->addWidget(m_view, 1);
    connect(m_scene, &GraphScene::groupToggleRequested, this, &GraphPage::toggleGroup);
    connect(m_searchBar, &GraphSearchBar::revealRequested, this,
            [this](const std::vector<uint32_t>& items) {
                bool changed = false;
                for (uint32_t item : items) {
                    changed = layout::expandToNode(m_tree, m_expanded, item) || changed;
                }
                if (changed) {
                    relayout(std::nullopt, [this] { m_searchBar->refresh(); });
                }
            });
    m_status->setAlignment(Qt::AlignCenter);
    m_status->setContentsMargins(0, 6, 0, 6);
    m_status->hide();
    m_idleTimer->setSingleShot(true);
    m_idleTimer->setInterval(kIdleRefinementDelayMs);
    connect(m_idleTimer, &QTimer::timeout, this, &GraphPage::refineWhenIdle);
    m_view->installEventFilter(this);
    m_view->viewport()->installEventFilter(this);
}

void GraphPage::setIdleRefinementDelay(int milliseconds) {
    m_idleTimer->setInterval(milliseconds);
}

size_t GraphPage::pendingRefinements() const {
    return m_cache ? m_cache->pendingRefinements() : 0;
}

bool GraphPage::eventFilter(QObject* watched, QEvent* event) {
    switch (event->type()) {
    case QEvent::MouseButtonPress:
    case QEvent::MouseMove:
    case QEvent::Wheel:
    case QEvent::KeyPress:
        noteActivity();
        break;
    default:
        break;
    }
    return QWidget::eventFilter(watched, event);
}

void GraphPage::noteActivity() {
    if (m_refineStop) {
        m_refineStop->store(true); // its result then asks for another idle wait
    }
    if (m_idleTimer->isActive()) {
        m_idleTimer->start();
    }
}

void GraphPage::refineWhenIdle() {
    if (m_document.isNull() || m_layingOut || m_refineStop || pendingRefinements() == 0) {
        return;
    }
    const int request = m_request;
    auto stop = std::make_shared<std::atomic<bool>>(false);
    m_refineStop = stop;
    m_jobs.start<size_t>(
        tr("Refining the layout"),
        [cache = m_cache, stop](Progress& progress) {
            StoppableProgress stoppable(progress, *stop);
            return layout::refineFallbacks(*cache, kRefinementBudgetSeconds, stoppable);
        },
        [this, request, stop](const Result<size_t>& refined) {
            if (m_refineStop == stop) {
                m_refineStop.reset();
            }
            if (request != m_request || m_document.isNull()) {
                return; // another graph or layout meanwhile; it waits for idle itself
            }
            if (!refined.ok() || *refined == 0) {
                if (pendingRefinements() > 0) {
                    m_idleTimer->start(); // interrupted by input: again when idle
                }
                return;
            }
            // Dot's drawing replaces the fallback; the view stays on the same scene point.
            const QPointF center = m_view->mapToScene(m_view->viewport()->rect().center());
            relayout(std::nullopt, [this, center] { m_view->centerOn(center); });
        });
}

void GraphPage::showGraph(GraphDocument& document) {
    ++m_request; // stale now: results of earlier requests are dropped
    m_document = &document;
    disconnect(m_quantizationConnection);
    m_quantizationConnection = connect(&document, &GraphDocument::quantizationChanged, this,
                                       &GraphPage::refreshQuantizers);
    disconnect(m_branchChoiceConnection);
    m_ruleHint->dismiss();
    m_branchChoiceConnection =
        connect(&document, &GraphDocument::branchChoiceMerged, m_ruleHint,
                [this, doc = &document](const QList<int>& ids) { m_ruleHint->offer(*doc, ids); });
    m_layingOut = true;
    m_searchBar->deactivate();
    m_scene->clearGraph();
    m_model = m_scene->prepareLayout(document.graph());
    m_tree = layout::buildGroupTree(m_model.input, layout::itemScopes(document.graph(), m_model));
    m_groupSizes = m_scene->measureGroups(document.graph(), m_model, m_tree);
    m_expanded = layout::autoExpand(m_tree);
    m_cache = std::make_shared<layout::GroupLayoutCache>();
    m_status->setText(
        tr("Laying out %n node(s)…", nullptr, static_cast<int>(m_model.items.size())));
    m_status->show();
    m_view->sceneChanged();
    // relayout() drops stale results, so `then` only runs for the newest request.
    relayout(std::nullopt, [this] {
        m_view->showOpeningView();
        m_view->setFocus(); // +, -, Space and the wheel work right away
    });
}

namespace {
/// What one layout job needs, shared with it (the page may start another meanwhile).
struct LayoutJob {
    layout::LayoutInput input;
    layout::GroupTree tree;
    std::vector<bool> expanded;
    std::vector<layout::Size> sizes;
    layout::GroupedLayoutOptions options;
    std::shared_ptr<layout::GroupLayoutCache> cache;
    std::shared_ptr<std::atomic<bool>> stop;
};
} // namespace

void GraphPage::cancelLayout() {
    if (m_stop) {
        m_stop->store(true);
    }
}

void GraphPage::relayout(std::optional<uint32_t> anchorGroup, std::function<void()> then) {
    cancelLayout();
    if (m_refineStop) {
        m_refineStop->store(true); // the layout asked for now comes first
    }
    const int request = ++m_request;
    m_layingOut = true;
    m_stop = std::make_shared<std::atomic<bool>>(false);
    auto job = std::make_shared<const LayoutJob>(
        LayoutJob{m_model.input, m_tree, m_expanded, m_groupSizes, m_options, m_cache, m_stop});
    // Where the anchor group is on screen now, to put it back there.
    std::optional<QPointF> anchorView;
    if (anchorGroup) {
        const QGraphicsItem* item = m_scene->groupBox(*anchorGroup);
        if (item == nullptr) {
            item = m_scene->groupFrame(*anchorGroup);
        }
        if (item != nullptr) {
            anchorView = m_view->mapFromScene(item->scenePos());
        }
    }
    m_jobs.start<layout::GroupedLayout>(
        tr("Laying out the graph"),
        [job](Progress& progress) {
            StoppableProgress stoppable(progress, *job->stop);
            return layout::computeGroupedLayout(job->input, job->tree, job->expanded, job->sizes,
                                                job->options, stoppable, job->cache.get());
        },
        [this, request, job, anchorGroup, anchorView,
         then = std::move(then)](Result<layout::GroupedLayout> placed) {
            if (request != m_request) {
                return; // a newer layout was asked for meanwhile
            }
            m_layingOut = false;
            if (!placed.ok() || m_document.isNull()) {
                const QString message = placed.ok()
                                            ? tr("The model was closed")
                                            : QString::fromStdString(placed.error().toString());
                m_status->setText(tr("No layout: %1").arg(message));
                m_status->show();
                Q_EMIT layoutFinished(false, message);
                return;
            }
            m_status->hide();
            m_lastFallbacks = placed->fallbacks;
            if (pendingRefinements() > 0) {
                m_idleTimer->start();
            }
            m_scene->populate(m_document->graph(), m_model, job->tree, job->expanded, *placed);
            refreshQuantizers();
            m_view->sceneChanged();
            if (anchorGroup && anchorView) {
                const QGraphicsItem* item = m_scene->groupBox(*anchorGroup);
                if (item == nullptr) {
                    item = m_scene->groupFrame(*anchorGroup);
                }
                if (item != nullptr) {
                    m_view->keepAt(item->scenePos(), *anchorView);
                }
            }
            if (then) {
                then();
            }
            Q_EMIT layoutFinished(true, {});
        });
}

void GraphPage::toggleGroup(uint32_t group) {
    if (group == 0 || group >= m_expanded.size()) {
        return;
    }
    m_expanded[group] = !m_expanded[group];
    relayout(group);
}

void GraphPage::expandAllGroups(bool expanded) {
    if (m_expanded.empty()) {
        return;
    }
    m_expanded.assign(m_expanded.size(), expanded);
    m_expanded[0] = true;
    relayout(std::nullopt, [this] { m_view->fitGraph(); });
}

bool GraphPage::expandScopes(const QStringList& paths) {
    bool matched = false;
    for (uint32_t g = 1; g < m_tree.groups.size(); ++g) {
        if (m_tree.groups[g].artificial ||
            !paths.contains(QString::fromStdString(m_tree.groups[g].path))) {
            continue;
        }
        matched = true;
        for (uint32_t at = g; at != layout::kNoGroup; at = m_tree.groups[at].parent) {
            m_expanded[at] = true;
        }
    }
    if (matched) {
        relayout(std::nullopt, [this] { m_view->fitGraph(); });
    }
    return matched;
}

std::vector<std::string> GraphPage::expandedGroupKeys() const {
    std::vector<std::string> keys;
    for (uint32_t g = 1; g < m_tree.groups.size() && g < m_expanded.size(); ++g) {
        if (m_expanded[g]) {
            keys.push_back(layout::groupKey(m_tree.groups[g]));
        }
    }
    return keys;
}

void GraphPage::showExpandedGroups(const std::vector<std::string>& keys,
                                   std::function<void()> then) {
    std::vector<bool> expanded(m_expanded.size(), false);
    if (!expanded.empty()) {
        expanded[0] = true;
    }
    for (uint32_t g = 1; g < m_tree.groups.size() && g < expanded.size(); ++g) {
        expanded[g] =
            std::find(keys.begin(), keys.end(), layout::groupKey(m_tree.groups[g])) != keys.end();
    }
    if (expanded == m_expanded) {
        if (then) {
            then();
        }
        return;
    }
    m_expanded = std::move(expanded);
    relayout(std::nullopt, std::move(then));
}

void GraphPage::revealItem(uint32_t item, std::function<void()> then) {
    if (item >= m_tree.groupOfNode.size() || !layout::expandToNode(m_tree, m_expanded, item)) {
        if (then) {
            then();
        }
        return;
    }
    relayout(std::nullopt, std::move(then));
}

void GraphPage::refreshQuantizers() {
    if (m_document.isNull() || m_layingOut) {
        return;
    }
    m_scene->showQuantizers(m_document->quantizerMarks());
}

NodeItem* GraphPage::opItem(const QString& nodeName) const {
    for (NodeItem* node : m_scene->nodeItems()) {
        if (!node->content().io && !node->group() && node->content().fullName == nodeName) {
            return node;
        }
    }
    return nullptr;
}

void GraphPage::revealOp(const QString& nodeName, const std::function<void()>& show) {
    if (m_document.isNull()) {
        return;
    }
    const std::optional<graph::NodeId> node = m_document->graph().findNode(nodeName.toStdString());
    const std::optional<uint32_t> item = node ? m_scene->itemOf(*node) : std::nullopt;
    if (item && !m_scene->isItemDrawn(*item)) {
        revealItem(*item, show); // opens the groups on the way
        return;
    }
    show();
}

void GraphPage::revealQuantizer(int id, const QString& nodeName) {
    revealOp(nodeName, [this, id, nodeName] {
        if (NodeItem* node = opItem(nodeName)) {
            m_view->centerOnNode(node);
        }
        if (QuantizerBadgeItem* badge = m_scene->badge(id)) {
            m_view->ensureVisible(badge);
            m_scene->selectQuantizers({id}); // the graph shows what the table row selected
        }
    });
}

void GraphPage::selectNode(const QString& nodeName) {
    revealOp(nodeName, [this, nodeName] {
        if (NodeItem* node = opItem(nodeName)) {
            m_scene->clearSelection();
            node->setSelected(true);
            m_view->centerOnNode(node);
        }
    });
}

} // namespace qs::ui
