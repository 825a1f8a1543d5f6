// The only file that includes cgraph/gvc. Everything Graphviz allocates is owned by RAII
// wrappers; one mutex serializes all calls.

#include "core/layout/graphviz_layout.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <poll.h>
#include <signal.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace qs::layout::detail {

namespace {
constexpr double kPointsPerInch = 72.0;

std::mutex& graphvizMutex() {
    static std::mutex mutex;
    return mutex;
}

/// Swallows cgraph's warnings (e.g. about spline routing); failures surface as return codes.
int ignoreGraphvizMessage(char*) {
    return 0;
}

struct ContextDeleter {
    void operator()(GVC_t* context) const { gvFreeContext(context); }
};

/// The process-wide Graphviz context, created on first use. Call with the mutex held.
GVC_t* context() {
    static const std::unique_ptr<GVC_t, ContextDeleter> instance = [] {
        agseterr(AGMAX);
        agseterrf(ignoreGraphvizMessage);
        return std::unique_ptr<GVC_t, ContextDeleter>(gvContext());
    }();
    return instance.get();
}

/// An open cgraph graph, laid out at most once; frees the layout and the graph on destruction.
class DotSession {
public:
    explicit DotSession(GVC_t* gvc)
        : m_gvc(gvc) {
        std::string name = "section";
        m_graph = agopen(name.data(), Agdirected, nullptr);
    }

    DotSession(const DotSession&) = delete;
    DotSession& operator=(const DotSession&) = delete;

    ~DotSession() {
        if (m_graph == nullptr) {
            return;
        }
        if (m_laidOut) {
            gvFreeLayout(m_gvc, m_graph);
        }
        agclose(m_graph);
    }

    Agraph_t* graph() const { return m_graph; }

    bool layout() {
        m_laidOut = gvLayout(m_gvc, m_graph, "dot") == 0;
        return m_laidOut;
    }

private:
    GVC_t* m_gvc;
    Agraph_t* m_graph = nullptr;
    bool m_laidOut = false;
};

std::string inches(double points) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.4f", points / kPointsPerInch);
    return buffer;
}

Agsym_t* declare(Agraph_t* graph, int kind, const char* name, const char* fallback) {
    std::string key = name;
    std::string value = fallback;
    return agattr(graph, kind, key.data(), value.data());
}

void set(void* object, Agsym_t* symbol, std::string value) {
    agxset(object, symbol, value.data());
}

/// Graph, node and edge defaults: fixed-size empty boxes, edges without arrows that leave at
/// the bottom and enter at the top.
struct Symbols {
    Agsym_t* width;
    Agsym_t* height;
};

Symbols declareDefaults(Agraph_t* graph, const DotGraph& spec) {
    declare(graph, AGRAPH, "rankdir", "TB");
    declare(graph, AGRAPH, "splines", "spline");
    declare(graph, AGRAPH, "nodesep", inches(spec.nodeSeparation).c_str());
    declare(graph, AGRAPH, "ranksep", inches(spec.rankSeparation).c_str());
    declare(graph, AGRAPH, "rank", "");
    if (spec.tuned) {
        // The documented speed knobs: bounded network simplex (ranking and x placement),
        // shorter crossing minimisation and search; splines stay, since edges need ports.
        declare(graph, AGRAPH, "nslimit", "2");
        declare(graph, AGRAPH, "nslimit1", "2");
        declare(graph, AGRAPH, "mclimit", "0.3");
        declare(graph, AGRAPH, "searchsize", "20");
        declare(graph, AGRAPH, "remincross", "false");
    }
    declare(graph, AGNODE, "shape", "box");
    declare(graph, AGNODE, "fixedsize", "true");
    declare(graph, AGNODE, "label", "");
    declare(graph, AGEDGE, "arrowhead", "none");
    declare(graph, AGEDGE, "tailport", "s");
    declare(graph, AGEDGE, "headport", "n");
    return {declare(graph, AGNODE, "width", "1"), declare(graph, AGNODE, "height", "0.5")};
}

/// The subgraph that pins its nodes to the first (`min`) or last (`max`) rank.
Agraph_t* rankSubgraph(Agraph_t* graph, const char* rank) {
    std::string name = std::string("pin_") + rank;
    Agraph_t* sub = agsubg(graph, name.data(), 1);
    std::string key = "rank";
    std::string value = rank;
    std::string fallback;
    agsafeset(sub, key.data(), value.data(), fallback.data());
    return sub;
}

std::vector<Agnode_t*> addNodes(Agraph_t* graph, const DotGraph& spec, const Symbols& symbols) {
    std::vector<Agnode_t*> nodes;
    nodes.reserve(spec.nodes.size());
    Agraph_t* first = nullptr;
    Agraph_t* last = nullptr;
    for (size_t i = 0; i < spec.nodes.size(); ++i) {
        std::string name = "n" + std::to_string(i);
        Agnode_t* node = agnode(graph, name.data(), 1);
        set(node, symbols.width, inches(spec.nodes[i].size.width));
        set(node, symbols.height, inches(spec.nodes[i].size.height));
        if (spec.nodes[i].pin == RankPin::First) {
            first = first != nullptr ? first : rankSubgraph(graph, "min");
            agsubnode(first, node, 1);
        } else if (spec.nodes[i].pin == RankPin::Last) {
            last = last != nullptr ? last : rankSubgraph(graph, "max");
            agsubnode(last, node, 1);
        }
        nodes.push_back(node);
    }
    return nodes;
}

double distance(pointf a, Point b) {
    return std::hypot(a.x - b.x, a.y - b.y);
}

/// The edge's spline in our coordinates, oriented from `tail` to `head`.
std::vector<Point> readPath(Agedge_t* edge, double top, double left, Point tail) {
    std::vector<Point> points;
    const splines* spl = ED_spl(edge);
    if (spl == nullptr) {
        return points;
    }
    for (int b = 0; b < spl->size; ++b) {
        const bezier& curve = spl->list[b];
        for (int i = 0; i < curve.size; ++i) {
            if (!points.empty() && i == 0) {
                continue; // consecutive pieces share their joint
            }
            points.push_back({curve.list[i].x - left, top - curve.list[i].y});
        }
    }
    if (points.size() >= 2 && distance(pointf{points.front().x, points.front().y}, tail) >
                                  distance(pointf{points.back().x, points.back().y}, tail)) {
        std::reverse(points.begin(), points.end());
    }
    return points;
}
} // namespace

namespace {
Result<DotResult> runDotLocked(const DotGraph& spec) {
    DotSession session(context());
    Agraph_t* graph = session.graph();
    if (graph == nullptr) {
        return Error(Errc::Internal, "Graphviz could not create a graph");
    }
    const Symbols symbols = declareDefaults(graph, spec);
    const std::vector<Agnode_t*> nodes = addNodes(graph, spec, symbols);
    std::vector<Agedge_t*> edges;
    edges.reserve(spec.edges.size());
    for (const DotEdge& edge : spec.edges) {
        edges.push_back(agedge(graph, nodes[edge.tail], nodes[edge.head], nullptr, 1));
    }
    if (!session.layout()) {
        return Error(Errc::Internal, "Graphviz dot layout failed");
    }
    const boxf box = GD_bb(graph);
    DotResult result;
    result.size = {box.UR.x - box.LL.x, box.UR.y - box.LL.y};
    result.centers.reserve(nodes.size());
    for (Agnode_t* node : nodes) {
        result.centers.push_back({ND_coord(node).x - box.LL.x, box.UR.y - ND_coord(node).y});
    }
    result.paths.reserve(edges.size());
    for (size_t e = 0; e < edges.size(); ++e) {
        const Point tail = result.centers[spec.edges[e].tail];
        result.paths.push_back(readPath(edges[e], box.UR.y, box.LL.x, tail));
    }
    return result;
}

/// The result as flat doubles for the pipe: width, height, centres, then per path its length
/// and points.
std::vector<double> encode(const DotResult& result) {
    std::vector<double> data{result.size.width, result.size.height};
    for (const Point& p : result.centers) {
        data.push_back(p.x);
        data.push_back(p.y);
    }
    for (const std::vector<Point>& path : result.paths) {
        data.push_back(static_cast<double>(path.size()));
        for (const Point& p : path) {
            data.push_back(p.x);
            data.push_back(p.y);
        }
    }
    return data;
}

bool decode(const std::vector<double>& data, const DotGraph& spec, DotResult& result) {
    size_t at = 0;
    const auto take = [&](double& value) {
        if (at >= data.size()) {
            return false;
        }
        value = data[at++];
        return true;
    };
    if (!take(result.size.width) || !take(result.size.height)) {
        return false;
    }
    result.centers.resize(spec.nodes.size());
    for (Point& p : result.centers) {
        if (!take(p.x) || !take(p.y)) {
            return false;
        }
    }
    result.paths.resize(spec.edges.size());
    for (std::vector<Point>& path : result.paths) {
        double count = 0;
        if (!take(count) || count < 0 || count > 1e6) {
            return false;
        }
        path.resize(static_cast<size_t>(count));
        for (Point& p : path) {
            if (!take(p.x) || !take(p.y)) {
                return false;
            }
        }
    }
    return at == data.size();
}

bool writeAll(int fd, const char* bytes, size_t size) {
    while (size > 0) {
        const ssize_t written = ::write(fd, bytes, size);
        if (written < 0 && errno == EINTR) {
            continue;
        }
        if (written <= 0) {
            return false;
        }
        bytes += written;
        size -= static_cast<size_t>(written);
    }
    return true;
}

/// In the forked child: lay out, write the encoded result, leave without running destructors
/// or atexit handlers (they belong to the parent).
[[noreturn]] void runChild(const DotGraph& spec, int fd) {
    auto result = runDotLocked(spec);
    int status = 1;
    if (result.ok()) {
        const std::vector<double> data = encode(*result);
        const uint64_t bytes = data.size() * sizeof(double);
        if (writeAll(fd, reinterpret_cast<const char*>(&bytes), sizeof bytes) &&
            writeAll(fd, reinterpret_cast<const char*>(data.data()), bytes)) {
            status = 0;
        }
    }
    ::_exit(status);
}

void killChild(pid_t child) {
    ::kill(child, SIGKILL);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
}
} // namespace

Result<DotResult> runDot(const DotGraph& spec) {
    const std::lock_guard lock(graphvizMutex());
    return runDotLocked(spec);
}

BudgetedDot runDotBudgeted(const DotGraph& spec, double budgetSeconds, Progress& progress) {
    using Clock = std::chrono::steady_clock;
    constexpr int kPollMs = 20;
    BudgetedDot answer;
    std::array<int, 2> fds{};
    if (::pipe2(fds.data(), O_CLOEXEC) != 0) {
        return answer;
    }
    pid_t child = 0;
    {
        // Forking with the mutex held: no other thread is inside Graphviz, so the child's copy
        // of its state is consistent. The context (and the dot plugin) exists before the fork.
        const std::lock_guard lock(graphvizMutex());
        static const bool warmed = [] {
            // Loads the dot plugin here, not with dlopen in a child of a threaded process.
            DotGraph tiny;
            tiny.nodes.push_back({});
            return runDotLocked(tiny).ok();
        }();
        (void)warmed;
        child = ::fork();
        if (child == 0) {
            ::close(fds[0]);
            runChild(spec, fds[1]);
        }
    }
    ::close(fds[1]);
    if (child < 0) {
        ::close(fds[0]);
        return answer;
    }
    const Clock::time_point deadline =
        Clock::now() + std::chrono::microseconds(static_cast<int64_t>(budgetSeconds * 1e6));
    std::vector<char> bytes;
    bool eof = false;
    while (!eof) {
        if (progress.isCancelled()) {
            answer.outcome = DotOutcome::Cancelled;
            break;
        }
        if (Clock::now() >= deadline) {
            answer.outcome = DotOutcome::TimedOut;
            break;
        }
        pollfd ready{fds[0], POLLIN, 0};
        const int polled = ::poll(&ready, 1, kPollMs);
        if (polled <= 0) {
            continue;
        }
        std::array<char, 65536> chunk{};
        const ssize_t got = ::read(fds[0], chunk.data(), chunk.size());
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            eof = true;
        } else {
            bytes.insert(bytes.end(), chunk.data(), chunk.data() + got);
        }
    }
    ::close(fds[0]);
    if (!eof) {
        killChild(child);
        return answer;
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    uint64_t size = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || bytes.size() < sizeof size) {
        return answer;
    }
    std::memcpy(&size, bytes.data(), sizeof size);
    if (size != bytes.size() - sizeof size || size % sizeof(double) != 0) {
        return answer;
    }
    std::vector<double> data(size / sizeof(double));
    std::memcpy(data.data(), bytes.data() + sizeof size, size);
    if (decode(data, spec, answer.result)) {
        answer.outcome = DotOutcome::Done;
    }
    return answer;
}

} // namespace qs::layout::detail
