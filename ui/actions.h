// Actions: every QAction of the main window, created in one place with its text, shortcut and
// status tip, plus the menus that show them (File with Export ▸, Edit, View with zoom, find and
// theme, Quantize with the HW config, preset and propagation rule, Compress, Help). Features
// (ui/features/) get theirs from addFeatureAction(), which also lists them in the menu they name,
// one section per feature. The Open Recent menu follows Settings; the owner connects the actions'
// triggered signals to what they do.
#pragma once

#include "core/quantization/quantization_state.h"
#include "ui/theme.h"

#include <QKeySequence>
#include <QObject>
#include <QStringList>

#include <memory>

class QAction;
class QActionGroup;
class QMenu;
class QMenuBar;
class QUndoGroup;

namespace qs::ui {

class Settings;

/// The menu a feature's action is listed in.
enum class FeatureMenu {
    Quantize, ///< Quantize, after the built-in entries
    Compress, ///< Compress (structured pruning)
    View,     ///< View, after the dock toggles
    Export,   ///< File ▸ Export, the model exports
};

/// What a feature's action shows: text, status tip, shortcut, checkable.
struct ActionSpec {
    QString name; ///< objectName, "<feature key>.<verb>" (tests and scripts find it by that)
    QString text;
    QString statusTip;
    QKeySequence shortcut = {};
    bool checkable = false;
};

/// The application's actions and menus.
class Actions : public QObject {
    Q_OBJECT

public:
    /// Undo and Redo act on the active stack of `undoGroup`.
    Actions(Settings& settings, QUndoGroup& undoGroup, QObject* parent = nullptr);

    QAction* open() const { return m_open; }

    QAction* reload() const { return m_reload; }

    /// File ▸ Open Session…, Save Session, Save Session As… (`.qscope`).
    QAction* openSession() const { return m_openSession; }

    QAction* saveSession() const { return m_saveSession; }

    QAction* saveSessionAs() const { return m_saveSessionAs; }

    /// Quantize ▸ Load HW Config File…
    QAction* loadHwConfig() const { return m_loadHwConfig; }

    QAction* importSetup() const { return m_importSetup; }

    QAction* clearRecent() const { return m_clearRecent; }

    QAction* undo() const { return m_undo; }

    QAction* redo() const { return m_redo; }

    QAction* quit() const { return m_quit; }

    QAction* about() const { return m_about; }

    QAction* exportImage() const { return m_exportImage; }

    QAction* zoomIn() const { return m_zoomIn; }

    QAction* zoomOut() const { return m_zoomOut; }

    QAction* fitView() const { return m_fitView; }

    QAction* find() const { return m_find; }

    QAction* findNext() const { return m_findNext; }

    QAction* findPrevious() const { return m_findPrevious; }

    /// View ▸ Colour-Blind-Safe Bit Widths (checkable, persisted by the owner).
    QAction* colorBlindPalette() const { return m_colorBlindPalette; }

    /// View ▸ Legend: the graph legend on or off (checkable).
    QAction* showLegend() const { return m_showLegend; }

    /// The checkable theme entry for `choice` (View ▸ Theme).
    QAction* themeAction(ThemeChoice choice) const;

    /// The checkable Quantize ▸ HW Config entries (cpu, gpu, npu), presets and rules.
    const QList<QAction*> hwConfigActions() const;

    const QList<QAction*> presetActions() const;

    const QList<QAction*> ruleActions() const;

    /// Checks the entries of `settings` (the open document's); the next choice starts from it.
    void showQuantizationSettings(const quantization::QuantizationSettings& settings);

    /// Enables the Quantize entries (a model with quantizers is open).
    void setQuantizationActionsEnabled(bool enabled);

    /// Enables the actions that need an open graph.
    void setGraphActionsEnabled(bool enabled);

    /// The View menu, once populate() ran; the main window adds its dock toggles there.
    QMenu* viewMenu() const { return m_viewMenu; }

    /// The File, File ▸ Export, Quantize and Compress menus, once populate() ran.
    QMenu* fileMenu() const { return m_fileMenu; }

    QMenu* exportMenu() const { return m_exportMenu; }

    QMenu* quantizeMenu() const { return m_quantizeMenu; }

    /// The Compress menu (features' entries only).
    QMenu* compressMenu() const { return m_compressMenu; }

    /// Creates feature `feature`'s action (after populate()) and lists it in `menu`; a feature's
    /// entries share one section of the Quantize and View menus. Disabled until the feature says.
    QAction* addFeatureAction(const QString& feature, FeatureMenu menu, const ActionSpec& spec);

    /// Every action addFeatureAction() created, in creation order.
    const QList<QAction*>& featureActions() const { return m_featureActions; }

    ~Actions() override;

    /// The File ▸ Open Recent submenu.
    QMenu* recentMenu() const { return m_recentMenu.get(); }

    /// Adds the File, Edit and Help menus to `menuBar`.
    void populate(QMenuBar& menuBar);

Q_SIGNALS:
    /// An entry of Open Recent was chosen.
    void recentFileTriggered(const QString& path);

    /// A theme entry was chosen.
    void themeTriggered(qs::ui::ThemeChoice choice);

    /// A HW config, preset or rule entry was chosen: the settings shown, with that one changed.
    void quantizationSettingsTriggered(const qs::quantization::QuantizationSettings& settings);

private:
    QAction* makeAction(const QString& text, const QString& statusTip);

    void rebuildRecentMenu();

    void setupViewActions(Settings& settings);

    void setupQuantizationActions();

    void setupSessionActions();

    QAction* addChoice(QActionGroup* group, const QString& text, int value);

    Settings& m_settings;
    QAction* m_open;
    QAction* m_reload;
    QAction* m_clearRecent;
    QAction* m_undo;
    QAction* m_redo;
    QAction* m_quit;
    QAction* m_about;
    QAction* m_exportImage;
    QAction* m_zoomIn;
    QAction* m_zoomOut;
    QAction* m_fitView;
    QAction* m_find;
    QAction* m_findNext;
    QAction* m_findPrevious;
    QActionGroup* m_themes;
    QAction* m_showLegend;
    QAction* m_colorBlindPalette;
    QActionGroup* m_hwConfigs;
    QActionGroup* m_presets;
    QActionGroup* m_rules;
    quantization::QuantizationSettings m_quantization;
    QAction* m_openSession = nullptr;
    QAction* m_saveSession = nullptr;
    QAction* m_saveSessionAs = nullptr;
    QAction* m_loadHwConfig = nullptr;
    QAction* m_importSetup = nullptr;
    std::unique_ptr<QMenu> m_recentMenu;
    QMenu* m_viewMenu = nullptr;
    QMenu* m_fileMenu = nullptr;
    QMenu* m_quantizeMenu = nullptr;
    QMenu* m_compressMenu = nullptr;
    QMenu* m_exportMenu = nullptr;
    QList<QAction*> m_featureActions;
    QString m_lastQuantizeFeature; ///< whose section the Quantize menu ends with
    QString m_lastCompressFeature;
    QString m_lastViewFeature;
};

} // namespace qs::ui
