# Install layout (FHS under CMAKE_INSTALL_PREFIX) and the CPack .deb.
include(GNUInstallDirs)

install(TARGETS shardlens-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET shardlens)
  install(TARGETS shardlens RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

if(TARGET shardlens_torch_plugin)
  install(TARGETS shardlens_torch_plugin LIBRARY DESTINATION lib/shardlens)  # torch_plugin() looks in <bin>/../lib/shardlens
endif()

# resource_dir() finds these at <bin>/../share/shardlens.
install(DIRECTORY resources/lessons DESTINATION ${CMAKE_INSTALL_DATADIR}/shardlens)
if(EXISTS ${PROJECT_SOURCE_DIR}/resources/models)
  install(DIRECTORY resources/models DESTINATION ${CMAKE_INSTALL_DATADIR}/shardlens)
endif()

set(SHARDLENS_APP_ID org.shardlens.ShardLens)
install(FILES packaging/${SHARDLENS_APP_ID}.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES packaging/${SHARDLENS_APP_ID}.metainfo.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
install(FILES packaging/icons/${SHARDLENS_APP_ID}.svg
        DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
foreach(size 16 32 48 64 128 256)
  install(FILES packaging/icons/${SHARDLENS_APP_ID}-${size}.png
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps
          RENAME ${SHARDLENS_APP_ID}.png)
endforeach()
install(FILES packaging/man/shardlens.1 packaging/man/shardlens-cli.1
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
# The user guide the README links to (docs/NAME.md and its pictures, beside it as there).
install(DIRECTORY docs DESTINATION ${CMAKE_INSTALL_DOCDIR}
        FILES_MATCHING PATTERN "*.md" PATTERN "*.png")
# The Python recorder as a pip-installable source tree:
#   pip install --no-build-isolation /usr/share/shardlens/python
# (setup.py builds outside the tree, so it installs from this read-only copy.)
install(FILES integrations/python/pyproject.toml integrations/python/setup.py
        DESTINATION ${CMAKE_INSTALL_DATADIR}/shardlens/python)
install(DIRECTORY integrations/python/shardlens_recorder
        DESTINATION ${CMAKE_INSTALL_DATADIR}/shardlens/python
        FILES_MATCHING PATTERN "*.py" PATTERN "*.json" PATTERN "__pycache__" EXCLUDE)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME shardlens)
set(CPACK_PACKAGE_VENDOR "ShardLens")
set(CPACK_PACKAGE_CONTACT "ShardLens team <team@shardlens.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "See what distributed evaluation does to a confusion matrix")
set(CPACK_PACKAGE_DESCRIPTION
    "ShardLens simulates, runs or loads multi-rank (PyTorch DDP / Lightning) evaluations,\n"
    "shows every rank's confusion matrix beside the synchronized and the expected one,\n"
    "highlights rows whose sums differ from the true class counts and explains why.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# CUDA/NCCL under /usr/local/cuda come from no Debian package: treat them as private.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS /usr/local/cuda/lib64 /usr/local/cuda/lib)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "qt6-qpa-plugins, fonts-dejavu-core")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "dataset-fashion-mnist, python3-torch, python3-numpy")
include(CPack)
