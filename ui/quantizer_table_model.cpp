#include "ui/quantizer_table_model.h"

#include "ui/features/calibration/calibration_state.h"
#include "ui/graph_document.h"
#include "ui/quantizer_commands.h"

#include <algorithm>
#include <unordered_map>

namespace qs::ui {

namespace {
QString qstr(std::string_view text) {
    return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}
} // namespace

QuantizerTableModel::QuantizerTableModel(QObject* parent)
    : QAbstractTableModel(parent) {}

void QuantizerTableModel::setDocument(GraphDocument* document) {
    disconnect(m_connection);
    disconnect(m_calibrationConnection);
    beginResetModel(); // another model: its rows are never an edit of the shown ones
    m_document = document;
    m_marks.clear();
    m_opTypes.clear();
    endResetModel();
    if (document != nullptr) {
        m_connection = connect(document, &GraphDocument::quantizationChanged, this,
                               &QuantizerTableModel::reload);
        // Calibration arriving or going stale changes the range/SQNR cells of every row (and
        // the summary, which follows resets), not the quantizers: a reset, rare and cheap.
        m_calibrationConnection =
            connect(document, &GraphDocument::stateChanged, this, [this](const QString& key) {
                if (key == kCalibrationKey) {
                    beginResetModel();
                    endResetModel();
                }
            });
    }
    reload();
}

bool QuantizerTableModel::updateChangedRows(const std::vector<quantization::QuantizerMark>& marks) {
    const bool sameRows =
        !m_marks.empty() &&
        std::equal(marks.begin(), marks.end(), m_marks.begin(), m_marks.end(),
                   [](const auto& a, const auto& b) { return a.id == b.id && a.point == b.point; });
    if (!sameRows) {
        return false;
    }
    for (size_t row = 0; row < marks.size(); ++row) {
        if (marks[row] == m_marks[row]) {
            continue;
        }
        m_marks[row] = marks[row];
        const int r = static_cast<int>(row);
        Q_EMIT dataChanged(index(r, 0), index(r, ColumnCount - 1));
    }
    return true;
}

void QuantizerTableModel::reload() {
    static const std::vector<quantization::QuantizerMark> kNone;
    const std::vector<quantization::QuantizerMark>& marks =
        m_document.isNull() ? kNone : m_document->quantizerMarks();
    if (updateChangedRows(marks)) {
        return; // an edit: a full reset would rebuild, re-sort and re-filter every row
    }
    beginResetModel();
    m_marks = marks;
    m_opTypes.clear();
    if (!m_document.isNull()) {
        // Graph::findNode scans every node: one name index keeps big tables linear.
        const graph::Graph& graph = m_document->graph();
        std::unordered_map<std::string_view, graph::NodeId> byName;
        for (const graph::NodeId node : graph.nodeIds()) {
            byName.try_emplace(graph.node(node).name, node);
        }
        for (const quantization::QuantizerMark& mark : m_marks) {
            const auto node = byName.find(mark.point.targetNodeName);
            m_opTypes.push_back(node != byName.end() ? qstr(graph.node(node->second).opType)
                                                     : QString());
        }
    }
    endResetModel();
}

int QuantizerTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_marks.size());
}

int QuantizerTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

int QuantizerTableModel::rowOf(int id) const {
    for (size_t row = 0; row < m_marks.size(); ++row) {
        if (m_marks[row].id == id) {
            return static_cast<int>(row);
        }
    }
    return -1;
}

const quantization::QuantizerConfigList* QuantizerTableModel::candidates(int id) const {
    const quantization::QuantizationState* state =
        m_document.isNull() ? nullptr : m_document->quantization();
    if (state == nullptr) {
        return nullptr;
    }
    auto point = state->proposal.setup.quantizationPoints.find(id);
    return point == state->proposal.setup.quantizationPoints.end() ? nullptr
                                                                   : &point->second.possibleConfigs;
}

QVariant QuantizerTableModel::candidatesData(const quantization::QuantizerMark& mark,
                                             int role) const {
    QStringList names;
    int chosen = 0;
    if (const auto* list = candidates(mark.id)) {
        for (size_t i = 0; i < list->size(); ++i) {
            names.push_back(qstr((*list)[i].toString()));
            chosen = (*list)[i] == mark.config ? static_cast<int>(i) : chosen;
        }
    }
    return role == CandidatesRole ? QVariant(names) : QVariant(chosen);
}

QVariant QuantizerTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) {
        return {};
    }
    const quantization::QuantizerMark& mark = m_marks[static_cast<size_t>(index.row())];
    if (index.column() == Config && (role == CandidatesRole || role == ChosenIndexRole)) {
        return candidatesData(mark, role);
    }
    if (index.column() >= Low &&
        (role == Qt::DisplayRole || role == Qt::EditRole || role == Qt::ToolTipRole)) {
        return calibrationData(mark, role == Qt::ToolTipRole ? -1 : index.column());
    }
    if (role == Qt::ToolTipRole && index.column() == Point) {
        QStringList ops;
        for (const std::string& op : mark.directlyQuantized) {
            ops.push_back(qstr(op));
        }
        return tr("Quantizes: %1").arg(ops.join(QStringLiteral(", ")));
    }
    if (role != Qt::DisplayRole && role != Qt::EditRole) {
        return {};
    }
    return displayData(index.row(), index.column());
}

QVariant QuantizerTableModel::displayData(int row, int column) const {
    const quantization::QuantizerMark& mark = m_marks[static_cast<size_t>(row)];
    switch (static_cast<Column>(column)) {
    case Id:
        return mark.id;
    case Point:
        return qstr(mark.point.toString());
    case OpType:
        return m_opTypes[static_cast<size_t>(row)];
    case Kind:
        return mark.point.isWeight ? tr("weight") : tr("activation");
    case Candidates:
        return mark.candidateCount;
    case Config:
        return qstr(mark.config.toString());
    case State:
        return mark.linkedTo ? qstr(quantization::statusName(mark.status)) +
                                   QStringLiteral(" → #%1").arg(*mark.linkedTo)
                             : qstr(quantization::statusName(mark.status));
    case Group:
        return mark.unifiedGroup ? QVariant(*mark.unifiedGroup) : QVariant(QString());
    default:
        break;
    }
    return {};
}

QVariant QuantizerTableModel::calibrationData(const quantization::QuantizerMark& mark,
                                              int column) const {
    const CalibrationResult* calibration =
        m_document.isNull() ? nullptr : freshCalibration(*m_document);
    const auto found = calibration == nullptr
                           ? quantization::QuantizerParametersMap::const_iterator{}
                           : calibration->parameters.find(mark.id);
    if (calibration == nullptr || found == calibration->parameters.end()) {
        return {};
    }
    const quantization::QuantizerParameters& params = found->second;
    const auto error = calibration->report.quantizers.find(mark.id);
    const bool hasError = error != calibration->report.quantizers.end();
    const auto single = [](const auto& values) {
        return values.size() == 1 ? QVariant(static_cast<double>(values.front())) : QVariant();
    };
    switch (column) {
    case Low:
        return *std::min_element(params.inputLow.begin(), params.inputLow.end());
    case High:
        return *std::max_element(params.inputHigh.begin(), params.inputHigh.end());
    case Scale:
    case ZeroPoint: {
        const QVariant value = column == Scale ? single(params.scale) : single(params.zeroPoint);
        return value.isValid()
                   ? value
                   : QVariant(tr("%n channel(s)", nullptr, static_cast<int>(params.scale.size())));
    }
    case Sqnr:
        return hasError ? QVariant(sqnrText(error->second.sqnrDb)) : QVariant();
    default: { // tooltip of every calibration column
        QString text = parametersText(params);
        if (hasError) {
            text += QLatin1Char('\n') +
                    tr("SQNR %1 vs the float model, %2 own noise")
                        .arg(sqnrText(error->second.sqnrDb), sqnrText(error->second.localSqnrDb));
        }
        return text;
    }
    }
}

QVariant QuantizerTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (static_cast<Column>(section)) {
    case Id:
        return tr("Id");
    case Point:
        return tr("Insertion point");
    case OpType:
        return tr("Op type");
    case Kind:
        return tr("Kind");
    case Candidates:
        return tr("Candidates");
    case Config:
        return tr("Chosen config");
    case State:
        return tr("State");
    case Group:
        return tr("Unified group");
    case Low:
        return tr("Low");
    case High:
        return tr("High");
    case Scale:
        return tr("Scale");
    case ZeroPoint:
        return tr("Zero point");
    case Sqnr:
        return tr("SQNR");
    case ColumnCount:
        break;
    }
    return {};
}

Qt::ItemFlags QuantizerTableModel::flags(const QModelIndex& index) const {
    Qt::ItemFlags flags = QAbstractTableModel::flags(index);
    if (index.isValid() && index.column() == Config &&
        m_marks[static_cast<size_t>(index.row())].status != quantization::QuantizerStatus::Merged &&
        m_marks[static_cast<size_t>(index.row())].candidateCount > 1) {
        flags |= Qt::ItemIsEditable;
    }
    return flags;
}

bool QuantizerTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (role != Qt::EditRole || index.column() != Config || m_document.isNull()) {
        return false;
    }
    const int id = m_marks[static_cast<size_t>(index.row())].id;
    const auto* list = candidates(id);
    bool ok = false;
    const int chosen = value.toInt(&ok);
    if (list == nullptr || !ok || chosen < 0 || static_cast<size_t>(chosen) >= list->size()) {
        return false;
    }
    m_document->undoStack().push(
        new ChooseQuantizerConfigCommand(*m_document, id, (*list)[static_cast<size_t>(chosen)]));
    return true;
}

} // namespace qs::ui
