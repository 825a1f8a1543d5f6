# Sessions (.qscope): a versioned file with one section per feature.
target_sources(qs_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/session_file.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sections.cpp
  ${CMAKE_CURRENT_LIST_DIR}/hawq_section.cpp
  ${CMAKE_CURRENT_LIST_DIR}/hessian_section.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pruning_masks_section.cpp
  ${CMAKE_CURRENT_LIST_DIR}/review_source.cpp
)
