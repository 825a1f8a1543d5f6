# core/layout: Graph -> positioned boxes, port anchors and edge splines through Graphviz dot.
target_sources(qs_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/layout.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graph_layout.cpp
  ${CMAKE_CURRENT_LIST_DIR}/graphviz_layout.cpp
  ${CMAKE_CURRENT_LIST_DIR}/group_tree.cpp
  ${CMAKE_CURRENT_LIST_DIR}/grouped_layout.cpp
  ${CMAKE_CURRENT_LIST_DIR}/layered_layout.cpp
  ${CMAKE_CURRENT_LIST_DIR}/synthetic_graph.cpp)
find_package(PkgConfig REQUIRED)
pkg_check_modules(GVC REQUIRED IMPORTED_TARGET libgvc libcgraph)
target_link_libraries(qs_core PRIVATE PkgConfig::GVC)
