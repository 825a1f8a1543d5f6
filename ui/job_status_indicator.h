// JobStatusIndicator: the status-bar strip that shows a running background job — its title, a
// busy or percentage bar, and a Cancel button — and hides itself when the JobRunner is idle.
#pragma once

#include <QWidget>

class QLabel;
class QProgressBar;
class QToolButton;

namespace qs::ui {

class JobRunner;

/// Shows the JobRunner's current job in the status bar.
class JobStatusIndicator : public QWidget {
    Q_OBJECT

public:
    explicit JobStatusIndicator(JobRunner& jobs, QWidget* parent = nullptr);

private:
    void showJob(const QString& title);

    void showProgress(int permille, const QString& what);

    JobRunner& m_jobs;
    QLabel* m_title;
    QProgressBar* m_bar;
    QToolButton* m_cancel;
};

} // namespace qs::ui
