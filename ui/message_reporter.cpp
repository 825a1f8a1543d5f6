#include "ui/message_reporter.h"

#include <QMessageBox>

namespace qs::ui {

void MessageBoxReporter::error(const QString& title, const QString& text) {
    QMessageBox::critical(m_parent, title, text);
}

void MessageBoxReporter::notice(const QString& title, const QString& text) {
    QMessageBox::information(m_parent, title, text);
}

} // namespace qs::ui
