# The Hessian service: requests, the LFH Hutchinson estimator, the per-sample cache.
target_sources(qs_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/hessian_scores_request.cpp
  ${CMAKE_CURRENT_LIST_DIR}/hessian_scores.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sample_batch_source.cpp
  ${CMAKE_CURRENT_LIST_DIR}/lfh_estimator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/hessian_service.cpp
)
