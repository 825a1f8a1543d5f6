#include "ui/actions.h"

#include "ui/settings.h"

#include <QAction>
#include <QActionGroup>
#include <QDir>
#include <QKeySequence>
#include <QMenu>
#include <QMenuBar>
#include <QUndoGroup>

namespace qs::ui {

namespace {
/// "&3 /models/resnet.onnx", with ampersands in the path kept literal.
QString recentEntryText(int index, const QString& path) {
    QString shown = QDir::toNativeSeparators(path);
    shown.replace(QLatin1Char('&'), QStringLiteral("&&"));
    const QString mnemonic =
        index < 9 ? QStringLiteral("&%1").arg(index + 1) : QString::number(index + 1);
    return mnemonic + QLatin1Char(' ') + shown;
}
} // namespace

Actions::Actions(Settings& settings, QUndoGroup& undoGroup, QObject* parent)
    : QObject(parent)
    , m_settings(settings)
    , m_open(makeAction(tr("&Open…"), tr("Open an ONNX model")))
    , m_reload(makeAction(tr("&Reload"), tr("Read the open model's file again")))
    , m_clearRecent(makeAction(tr("&Clear Recent Files"), tr("Forget the recent model files")))
    , m_undo(undoGroup.createUndoAction(this))
    , m_redo(undoGroup.createRedoAction(this))
    , m_quit(makeAction(tr("&Quit"), tr("Quit Quantscope")))
    , m_about(makeAction(tr("&About Quantscope"), tr("Version and license")))
    , m_exportImage(makeAction(tr("&Export Image…"), tr("Save the graph as SVG, PNG, PDF or DOT")))
    , m_zoomIn(makeAction(tr("Zoom &In"), tr("Zoom into the graph (+ or the wheel)")))
    , m_zoomOut(makeAction(tr("Zoom &Out"), tr("Zoom out of the graph (- or the wheel)")))
    , m_fitView(makeAction(tr("&Fit Graph\tSpace"), tr("Show the whole graph")))
    , m_find(makeAction(tr("&Find…"), tr("Find nodes by name or op type")))
    , m_findNext(makeAction(tr("Find &Next"), tr("Go to the next match")))
    , m_findPrevious(makeAction(tr("Find &Previous"), tr("Go to the previous match")))
    , m_themes(new QActionGroup(this))
    , m_showLegend(makeAction(tr("&Legend"), tr("Show what the quantizer marks on the graph mean")))
    , m_colorBlindPalette(makeAction(tr("&Colour-Blind-Safe Bit Widths"),
                                     tr("Colour quantizer badges with the Okabe-Ito palette")))
    , m_hwConfigs(new QActionGroup(this))
    , m_presets(new QActionGroup(this))
    , m_rules(new QActionGroup(this))
    , m_recentMenu(std::make_unique<QMenu>(tr("Open &Recent"))) {
    m_open->setShortcut(QKeySequence::Open);
    m_reload->setShortcut(Qt::Key_F5);
    m_reload->setEnabled(false);
    m_quit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));
    m_undo->setShortcut(QKeySequence::Undo);
    m_redo->setShortcut(QKeySequence::Redo);
    m_quit->setMenuRole(QAction::QuitRole);
    m_about->setMenuRole(QAction::AboutRole);
    setupViewActions(settings);
    setupSessionActions(); // before the Quantize entries, which enable these with them
    setupQuantizationActions();
    connect(m_clearRecent, &QAction::triggered, &m_settings, &Settings::clearRecentFiles);
    connect(&m_settings, &Settings::recentFilesChanged, this, &Actions::rebuildRecentMenu);
    rebuildRecentMenu();
}

Actions::~Actions() = default;

void Actions::populate(QMenuBar& menuBar) {
    QMenu* file = menuBar.addMenu(tr("&File"));
    m_fileMenu = file;
    file->addAction(m_open);
    file->addMenu(m_recentMenu.get());
    file->addAction(m_reload);
    file->addSeparator();
    file->addAction(m_openSession);
    file->addAction(m_saveSession);
    file->addAction(m_saveSessionAs);
    file->addSeparator();
    file->addAction(m_exportImage);
    m_exportMenu = file->addMenu(tr("E&xport"));
    m_exportMenu->setObjectName(QStringLiteral("exportMenu"));
    m_exportMenu->setEnabled(false); // until a feature lists an export
    file->addSeparator();
    file->addAction(m_quit);
    QMenu* edit = menuBar.addMenu(tr("&Edit"));
    edit->addAction(m_undo);
    edit->addAction(m_redo);
    m_viewMenu = menuBar.addMenu(tr("&View"));
    m_viewMenu->addAction(m_zoomIn);
    m_viewMenu->addAction(m_zoomOut);
    m_viewMenu->addAction(m_fitView);
    m_viewMenu->addSeparator();
    m_viewMenu->addAction(m_find);
    m_viewMenu->addAction(m_findNext);
    m_viewMenu->addAction(m_findPrevious);
    m_viewMenu->addSeparator();
    QMenu* theme = m_viewMenu->addMenu(tr("&Theme"));
    theme->addActions(m_themes->actions());
    m_viewMenu->addAction(m_colorBlindPalette);
    m_viewMenu->addAction(m_showLegend);
    m_viewMenu->addSeparator();
    QMenu* quantize = menuBar.addMenu(tr("&Quantize"));
    m_quantizeMenu = quantize;
    quantize->addMenu(tr("&HW Config"))->addActions(m_hwConfigs->actions());
    quantize->addMenu(tr("&Preset"))->addActions(m_presets->actions());
    quantize->addMenu(tr("Propagation &Rule"))->addActions(m_rules->actions());
    quantize->addSeparator();
    quantize->addAction(m_loadHwConfig);
    quantize->addAction(m_importSetup);
    m_compressMenu = menuBar.addMenu(tr("&Compress"));
    QMenu* help = menuBar.addMenu(tr("&Help"));
    help->addAction(m_about);
}

QAction* Actions::addFeatureAction(const QString& feature, FeatureMenu menu,
                                   const ActionSpec& spec) {
    QAction* action = makeAction(spec.text, spec.statusTip);
    action->setObjectName(spec.name);
    action->setShortcut(spec.shortcut);
    action->setCheckable(spec.checkable);
    action->setEnabled(false);
    m_featureActions.push_back(action);
    // A feature's entries form one section, after a separator.
    auto addInSection = [&](QMenu* target, QString& lastFeature) {
        if (lastFeature != feature) {
            target->addSeparator();
            lastFeature = feature;
        }
        target->addAction(action);
    };
    switch (menu) {
    case FeatureMenu::Quantize:
        addInSection(m_quantizeMenu, m_lastQuantizeFeature);
        break;
    case FeatureMenu::Compress:
        addInSection(m_compressMenu, m_lastCompressFeature);
        break;
    case FeatureMenu::View:
        addInSection(m_viewMenu, m_lastViewFeature);
        break;
    case FeatureMenu::Export:
        m_exportMenu->addAction(action);
        m_exportMenu->setEnabled(true);
        break;
    }
    return action;
}

QAction* Actions::makeAction(const QString& text, const QString& statusTip) {
    auto* action = new QAction(text, this);
    action->setStatusTip(statusTip);
    return action;
}

void Actions::setupViewActions(Settings& settings) {
    m_exportImage->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    m_zoomIn->setShortcut(QKeySequence::ZoomIn);
    m_zoomOut->setShortcut(QKeySequence::ZoomOut);
    m_find->setShortcut(QKeySequence::Find);
    m_findNext->setShortcut(QKeySequence::FindNext);
    m_findPrevious->setShortcut(QKeySequence::FindPrevious);
    setGraphActionsEnabled(false);
    const std::pair<ThemeChoice, QString> themes[] = {{ThemeChoice::System, tr("&System")},
                                                      {ThemeChoice::Light, tr("&Light")},
                                                      {ThemeChoice::Dark, tr("&Dark")}};
    for (const auto& [choice, text] : themes) {
        QAction* action = makeAction(text, tr("Use the %1 theme").arg(themeName(choice)));
        action->setCheckable(true);
        action->setChecked(choice == settings.theme());
        action->setData(static_cast<int>(choice));
        m_themes->addAction(action);
        connect(action, &QAction::triggered, this,
                [this, choice = choice] { Q_EMIT themeTriggered(choice); });
    }
    m_themes->setExclusive(true);
    m_colorBlindPalette->setCheckable(true);
    m_colorBlindPalette->setChecked(settings.colorBlindPalette());
    m_showLegend->setCheckable(true);
    m_showLegend->setChecked(settings.showLegend());
}

QAction* Actions::addChoice(QActionGroup* group, const QString& text, int value) {
    QAction* action = makeAction(text, text);
    action->setCheckable(true);
    action->setData(value);
    group->addAction(action);
    return action;
}

void Actions::setupSessionActions() {
    m_openSession = makeAction(tr("Open &Session…"), tr("Open a saved .qscope session"));
    m_saveSession = makeAction(tr("&Save Session"), tr("Save the model's choices as a session"));
    m_saveSessionAs =
        makeAction(tr("Save Session &As…"), tr("Save the model's choices as a new session"));
    m_loadHwConfig = makeAction(tr("Load HW Config &File…"),
                                tr("Place quantizers for a HW config read from a JSON file"));
    m_importSetup = makeAction(
        tr("Import Quantizer &Setup…"),
        tr("Choose the configs of a saved setup JSON (quantscope-cli quantize --setup-out, or "
           "NNCF's setup state) for the current HW config"));
    m_saveSession->setShortcut(QKeySequence::Save);
    m_saveSessionAs->setShortcut(QKeySequence::SaveAs);
    for (QAction* action : {m_saveSession, m_saveSessionAs, m_loadHwConfig, m_importSetup}) {
        action->setEnabled(false);
    }
}

void Actions::setupQuantizationActions() {
    using quantization::QuantizationPreset;
    using quantization::QuantizerPropagationRule;
    const QString devices[] = {QStringLiteral("cpu"), QStringLiteral("gpu"), QStringLiteral("npu")};
    for (int i = 0; i < 3; ++i) {
        QAction* action = addChoice(m_hwConfigs, devices[i].toUpper(), i);
        action->setStatusTip(
            tr("Place quantizers for the built-in %1 HW config").arg(devices[i].toUpper()));
        connect(action, &QAction::triggered, this, [this, device = devices[i]] {
            quantization::QuantizationSettings settings = m_quantization;
            settings.hw = device.toStdString();
            Q_EMIT quantizationSettingsTriggered(settings);
        });
    }
    const std::pair<QuantizationPreset, QString> presets[] = {
        {QuantizationPreset::Performance, tr("&Performance (symmetric)")},
        {QuantizationPreset::Mixed, tr("&Mixed (asymmetric activations)")}};
    for (const auto& [preset, text] : presets) {
        QAction* action = addChoice(m_presets, text, static_cast<int>(preset));
        connect(action, &QAction::triggered, this, [this, preset = preset] {
            quantization::QuantizationSettings settings = m_quantization;
            settings.preset = preset;
            Q_EMIT quantizationSettingsTriggered(settings);
        });
    }
    for (auto rule : {QuantizerPropagationRule::MergeAllInOne,
                      QuantizerPropagationRule::MergeWithPotentialRequantization,
                      QuantizerPropagationRule::MergeIfAllBranchesSame,
                      QuantizerPropagationRule::DoNotMergeBranches}) {
        const std::string_view name = quantization::ruleName(rule);
        QAction* action = addChoice(
            m_rules, QString::fromLatin1(name.data(), static_cast<qsizetype>(name.size())),
            static_cast<int>(rule));
        connect(action, &QAction::triggered, this, [this, rule] {
            quantization::QuantizationSettings settings = m_quantization;
            settings.rule = rule;
            Q_EMIT quantizationSettingsTriggered(settings);
        });
    }
    showQuantizationSettings(m_quantization);
    setQuantizationActionsEnabled(false);
}

const QList<QAction*> Actions::hwConfigActions() const {
    return m_hwConfigs->actions();
}

const QList<QAction*> Actions::presetActions() const {
    return m_presets->actions();
}

const QList<QAction*> Actions::ruleActions() const {
    return m_rules->actions();
}

void Actions::showQuantizationSettings(const quantization::QuantizationSettings& settings) {
    m_quantization = settings;
    for (QAction* action : m_hwConfigs->actions()) {
        action->setChecked(action->text().toLower().toStdString() == settings.hw);
    }
    for (QAction* action : m_presets->actions()) {
        action->setChecked(action->data().toInt() == static_cast<int>(settings.preset));
    }
    for (QAction* action : m_rules->actions()) {
        action->setChecked(action->data().toInt() == static_cast<int>(settings.rule));
    }
}

void Actions::setQuantizationActionsEnabled(bool enabled) {
    for (QActionGroup* group : {m_hwConfigs, m_presets, m_rules}) {
        group->setEnabled(enabled);
    }
    for (QAction* action : {m_saveSession, m_saveSessionAs, m_loadHwConfig, m_importSetup}) {
        action->setEnabled(enabled);
    }
}

QAction* Actions::themeAction(ThemeChoice choice) const {
    for (QAction* action : m_themes->actions()) {
        if (action->data().toInt() == static_cast<int>(choice)) {
            return action;
        }
    }
    return nullptr;
}

void Actions::setGraphActionsEnabled(bool enabled) {
    for (QAction* action :
         {m_exportImage, m_zoomIn, m_zoomOut, m_fitView, m_find, m_findNext, m_findPrevious}) {
        action->setEnabled(enabled);
    }
}

void Actions::rebuildRecentMenu() {
    m_recentMenu->clear();
    const QStringList files = m_settings.recentFiles();
    for (int i = 0; i < files.size(); ++i) {
        const QString& path = files[i];
        QAction* entry = m_recentMenu->addAction(recentEntryText(i, path));
        entry->setStatusTip(path);
        connect(entry, &QAction::triggered, this,
                [this, path] { Q_EMIT recentFileTriggered(path); });
    }
    m_recentMenu->addSeparator();
    m_recentMenu->addAction(m_clearRecent);
    m_clearRecent->setEnabled(!files.isEmpty());
    m_recentMenu->setEnabled(!files.isEmpty());
}

} // namespace qs::ui
