// CompareFeature: Quantize ▸ Compare With… lays another setup JSON, `.qscope` session or compressed
// export (QDQ, weight-compressed, pruned or FP16 ONNX) of the open model over its graph
// (CompareOverlay), through the same core reader as `quantscope-cli diff`; Quantize ▸ Clear
// Comparison ends it. A file that is not of this model is an error dialog; the comparison shown
// before stays.
#pragma once

#include "ui/feature.h"

#include <QPointer>

class QAction;

namespace qs::ui {

class CompareOverlay;
class GraphDocument;

class CompareFeature : public Feature {
    Q_OBJECT

public:
    explicit CompareFeature(const FeatureContext& context);

    ~CompareFeature() override;

    QString key() const override;

    void createActions(Actions& actions) override;

    /// Compares the open document with `path`; false (and an error dialog) when it cannot.
    bool compareWith(const QString& path);

    CompareOverlay& overlay() const { return *m_overlay; }

    QAction* compareAction() const { return m_compare; }

    QAction* clearAction() const { return m_clear; }

private:
    void syncActions();

    void showCompareDialog();

    FeatureContext m_context;
    CompareOverlay* m_overlay;
    QPointer<GraphDocument> m_document;
    QAction* m_compare = nullptr;
    QAction* m_clear = nullptr;
};

} // namespace qs::ui
