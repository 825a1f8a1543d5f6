// GraphSearchBar: Ctrl+F over the graph — a line that matches node names and op types as text
// or, with the ".*" toggle, as a regular expression; Enter / Shift+Enter (and the arrows) step
// to the next / previous match, which the view centres and selects; Escape closes the bar.
#pragma once

#include <QWidget>

#include <vector>

class QLabel;
class QLineEdit;
class QToolButton;

namespace qs::ui {

class GraphView;
class NodeItem;

/// Search bar driving a GraphView.
class GraphSearchBar : public QWidget {
    Q_OBJECT

public:
    explicit GraphSearchBar(GraphView& view, QWidget* parent = nullptr);

    /// Shows the bar and focuses its text field.
    void activate();

    /// Hides the bar and clears the match marks.
    void deactivate();

    /// Runs the search for `text` (as typed) and centres the first match.
    void setQuery(const QString& text, bool regex = false);

    void findNext();

    void findPrevious();

    /// Matches of the current query, in drawing order.
    const std::vector<NodeItem*>& matches() const { return m_matches; }

    /// Index of the centred match, -1 when there is none.
    int current() const { return m_current; }

    /// "3 of 17", "No matches", "Invalid pattern", "+4 in collapsed groups".
    QString status() const;

    /// Matching layout items hidden in collapsed groups.
    const std::vector<uint32_t>& hiddenMatches() const { return m_hidden; }

    /// Runs the current query again (after the groups changed).
    void refresh();

Q_SIGNALS:
    /// Enter with matches hidden in collapsed groups: open the groups of `items`.
    void revealRequested(const std::vector<uint32_t>& items);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void search();

    void step(int delta);

    QString hiddenNote() const;

    GraphView& m_view;
    QLineEdit* m_field;
    QToolButton* m_regex;
    QLabel* m_status;
    std::vector<NodeItem*> m_matches;
    std::vector<uint32_t> m_hidden;
    int m_current = -1;
};

} // namespace qs::ui
