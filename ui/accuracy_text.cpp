#include "ui/accuracy_text.h"

#include <QObject>

namespace qs::ui {

QString accuracySummary(const report::AccuracyComparison& accuracy, const QString& compressedName) {
    return QObject::tr("top-1 accuracy: float %1 %, %2 %3 % (%4 labelled)")
        .arg(QString::number(accuracy.floatModel.top1() * 100, 'f', 2), compressedName,
             QString::number(accuracy.compressed.top1() * 100, 'f', 2))
        .arg(accuracy.floatModel.samples);
}

} // namespace qs::ui
