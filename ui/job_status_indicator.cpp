#include "ui/job_status_indicator.h"

#include "ui/job_runner.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QToolButton>

namespace qs::ui {

namespace {
constexpr int kBarWidth = 160;
constexpr int kPermille = 1000;
} // namespace

JobStatusIndicator::JobStatusIndicator(JobRunner& jobs, QWidget* parent)
    : QWidget(parent)
    , m_jobs(jobs)
    , m_title(new QLabel(this))
    , m_bar(new QProgressBar(this))
    , m_cancel(new QToolButton(this)) {
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_title);
    layout->addWidget(m_bar);
    layout->addWidget(m_cancel);
    m_bar->setFixedWidth(kBarWidth);
    m_bar->setTextVisible(false);
    m_cancel->setText(tr("Cancel"));
    m_cancel->setToolTip(tr("Stop the running job"));
    connect(m_cancel, &QToolButton::clicked, &m_jobs, &JobRunner::cancelAll);
    connect(&m_jobs, &JobRunner::jobStarted, this, &JobStatusIndicator::showJob);
    connect(&m_jobs, &JobRunner::progressChanged, this, &JobStatusIndicator::showProgress);
    connect(&m_jobs, &JobRunner::busyChanged, this, &JobStatusIndicator::setVisible);
    setVisible(false);
}

void JobStatusIndicator::showJob(const QString& title) {
    m_title->setText(title);
    m_bar->setRange(0, 0);
}

void JobStatusIndicator::showProgress(int permille, const QString& what) {
    if (permille <= 0) {
        return;
    }
    m_bar->setRange(0, kPermille);
    m_bar->setValue(permille);
    m_bar->setToolTip(what);
}

} // namespace qs::ui
