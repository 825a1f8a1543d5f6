# Graph passes: one file per pass, one entry function each (see pass.h).
target_sources(qs_core PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/pass.cpp
  ${CMAKE_CURRENT_LIST_DIR}/remove_identity.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fold_batch_norm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fold_constants.cpp
)
