# Desktop integration files and the Debian package. Included last by the top-level CMakeLists.txt, so
# every target's install() rule is known. Build the package from a configured tree with
#   cpack --config build/release/CPackConfig.cmake -G DEB -B build/release/package
# The binaries themselves are installed by app/CMakeLists.txt, the demo model by resources/.

set(QS_APP_ID io.quantscope.Quantscope)
set(QS_PACKAGING_DIR ${CMAKE_CURRENT_LIST_DIR})

install(FILES ${QS_PACKAGING_DIR}/quantscope.desktop
        DESTINATION ${CMAKE_INSTALL_DATADIR}/applications RENAME ${QS_APP_ID}.desktop)
install(FILES ${QS_PACKAGING_DIR}/${QS_APP_ID}.metainfo.xml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
install(FILES ${QS_PACKAGING_DIR}/quantscope-mime.xml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages RENAME quantscope.xml)
install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/quantscope.svg
        DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
# The PNG is rendered from the SVG once and committed (see packaging/render-icon.sh).
install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/quantscope-256.png
        DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/256x256/apps RENAME quantscope.png)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/quantscope RENAME copyright)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME quantscope)
set(CPACK_PACKAGE_VENDOR "Quantscope developers")
set(CPACK_PACKAGE_CONTACT "Quantscope developers <dev@quantscope.invalid>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Workbench for quantizing and pruning ONNX neural networks")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${CPACK_PACKAGE_CONTACT})
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The synopsis line comes from CPACK_PACKAGE_DESCRIPTION_SUMMARY; this is the extended text.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "Quantscope opens an ONNX model and shows every place a quantizer can go,
proposes quantizers with candidate configurations, chooses bitwidths by hand
or with HAWQ mixed precision, prunes channels in SIMD-sized groups, and
exports QDQ, pruned, weight-compressed or FP16 ONNX models with graph images
and reports. The package holds the Qt desktop application quantscope and its
headless twin quantscope-cli.")
# Depends on shared libraries is computed by dpkg-shlibdeps (package dpkg-dev) from the binaries.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# What the binaries load at run time without linking to it: Qt's platform and SVG icon plugins.
if(QS_BUILD_GUI)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "qt6-qpa-plugins, libqt6svg6")
endif()
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "graphviz, fonts-dejavu-core")

include(CPack)
