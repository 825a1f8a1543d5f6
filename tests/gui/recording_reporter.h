// A MessageReporter for tests: records what the window would have shown in message boxes.
#pragma once

#include "ui/message_reporter.h"

#include <QStringList>

namespace qs::ui::test {

/// What the window told the user.
struct Messages {
    QStringList errors;
    QStringList notices;
};

class RecordingReporter final : public MessageReporter {
public:
    explicit RecordingReporter(Messages& messages)
        : m_messages(messages) {}

    void error(const QString&, const QString& text) override { m_messages.errors.push_back(text); }

    void notice(const QString&, const QString& text) override {
        m_messages.notices.push_back(text);
    }

private:
    Messages& m_messages;
};

/// Records only the errors, into a caller's list (notices are dropped).
class ErrorRecorder final : public MessageReporter {
public:
    explicit ErrorRecorder(QStringList& errors)
        : m_errors(errors) {}

    void error(const QString&, const QString& text) override { m_errors.push_back(text); }

    void notice(const QString&, const QString&) override {}

private:
    QStringList& m_errors;
};

} // namespace qs::ui::test
