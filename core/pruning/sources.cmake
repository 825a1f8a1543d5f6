# SIMD structured pruning: sections, importance, greedy masks, the memory calculator, the pruned
# graph and the workflow.
target_sources(qs_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/prepare_graph.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pruning_section.cpp
  ${CMAKE_CURRENT_LIST_DIR}/simd_size.cpp
  ${CMAKE_CURRENT_LIST_DIR}/memory_calculator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/channel_importance.cpp
  ${CMAKE_CURRENT_LIST_DIR}/greedy_mask.cpp
  ${CMAKE_CURRENT_LIST_DIR}/prune_graph.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pruning_workflow.cpp
)
