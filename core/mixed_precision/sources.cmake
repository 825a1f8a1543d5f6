# HAWQ mixed precision: problem, trace-order candidates, BitOps measures, perturbations, the exact
# Pareto search, the workflow.
target_sources(qs_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/hawq_problem.cpp
  ${CMAKE_CURRENT_LIST_DIR}/trace_order_candidates.cpp
  ${CMAKE_CURRENT_LIST_DIR}/bitops.cpp
  ${CMAKE_CURRENT_LIST_DIR}/perturbation.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pareto_search.cpp
  ${CMAKE_CURRENT_LIST_DIR}/hawq_workflow.cpp
)
