// DatasetPicker: the one dataset chooser of the GUI, shared by Quantize ▸ Calibrate… and Compress
// Weights…. It offers N seeded random samples, a .npy file (one model input, samples on axis 0), a
// folder of images, or a folder of images in one subfolder per class — plus, when the caller allows
// it, no dataset — with the sample limit, the batch size and an optional labels file (.npy, one
// class index per sample). It checks what was typed (a missing path, a file where a folder is
// needed) with errors that name the field, and fills the runtime's DatasetRequest (source, limits,
// batch size and labels file).
#pragma once

#include "core/runtime/dataset_request.h"
#include "core/support/result.h"

#include <QWidget>

#include <cstdint>
#include <string>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace qs::ui {

/// Dataset source, limits and labels, as form rows.
class DatasetPicker : public QWidget {
    Q_OBJECT

public:
    enum class Kind { None, Random, Npy, ImageFolder, ClassFolders };

    /// What the caller allows and starts from.
    struct Options {
        bool allowNone = false; ///< offer "No dataset" (a data-free metric needs none)
        int defaultSamples = 300;
        int defaultBatch = 8;
        bool autoBatch = false; ///< batch size 0 means the model's static batch or the default
    };

    explicit DatasetPicker(const Options& options, QWidget* parent = nullptr);

    Kind kind() const;

    void setKind(Kind kind);

    /// The file or folder of the chosen kind (trimmed).
    QString path() const;

    void setPath(const QString& path);

    /// Random: how many samples; files and folders: the most samples read.
    int samples() const;

    void setSamples(int samples);

    /// Samples per run (0: automatic, when the options allow it).
    int batchSize() const;

    void setBatchSize(int batchSize);

    /// The optional labels file (empty: none; ignored for random samples and class folders).
    QString labelsPath() const;

    void setLabelsPath(const QString& path);

    /// Sets the kind, path, sample count, batch size and labels that `source` describes (its
    /// first .npy file).
    void showSource(const runtime::DatasetRequest& source);

    /// Writes the chosen source, sample count, batch size (0: unset, the one batch-size rule)
    /// and labels file into `source` (names, seed, shapes and normalisation stay); an error names
    /// the missing or wrong field ("choose a folder of images").
    Result<void> applyTo(runtime::DatasetRequest& source) const;

    /// Enables the rows that mean something for the kind (and the picker as a whole).
    void setPickerEnabled(bool enabled);

    QComboBox& kindBox() const { return *m_kind; }

    QLineEdit& pathEdit() const { return *m_path; }

    QLineEdit& labelsEdit() const { return *m_labels; }

    QSpinBox& samplesBox() const { return *m_samples; }

    QSpinBox& batchBox() const { return *m_batch; }

Q_SIGNALS:
    /// The kind, a path or a number changed.
    void changed();

private:
    void syncEnabled();

    void browsePath();

    void browseLabels();

    QComboBox* m_kind;
    QLineEdit* m_path;
    QPushButton* m_browsePath;
    QLineEdit* m_labels;
    QPushButton* m_browseLabels;
    QSpinBox* m_samples;
    QSpinBox* m_batch;
    bool m_enabled = true;
};

} // namespace qs::ui
