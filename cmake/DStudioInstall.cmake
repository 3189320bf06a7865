# Where `cmake --install` (and so the Debian package, prefix /usr) puts the studio:
#   bin/                              dstudio, decision-studio, decision-viewer
#   lib/<multiarch>/decision-studio/  the two shared libraries; plugins/ for plugins installed for all
#   share/decision-studio/            checkpoints, environments (MJCF), policies, lessons; guide/
#   share/applications, share/icons/hicolor, share/mime/packages, share/metainfo
#   share/man/man1                    man pages made from each program's --help (help2man)
#   share/doc/decision-studio/        copyright, changelog.Debian.gz, the plugin examples' sources
#   include/, <libdir>/cmake/DecisionStudio   the plugin SDK (core/CMakeLists.txt)
# The programs find share/decision-studio from their own location, so a build tree gets the same
# shape: build/<preset>/share/decision-studio links into resources/ and docs/.

set(DSTUDIO_DATADIR ${CMAKE_INSTALL_DATADIR}/decision-studio)
set(_linux ${PROJECT_SOURCE_DIR}/packaging/linux)

# --- the build tree's resources folder -------------------------------------------------------------
set(_share ${CMAKE_BINARY_DIR}/share/decision-studio)
file(MAKE_DIRECTORY ${_share})
file(GLOB _resource_dirs LIST_DIRECTORIES true RELATIVE ${PROJECT_SOURCE_DIR}/resources ${PROJECT_SOURCE_DIR}/resources/*)
foreach(entry IN LISTS _resource_dirs)
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/resources/${entry} ${_share}/${entry} SYMBOLIC)
endforeach()
file(CREATE_LINK ${PROJECT_SOURCE_DIR}/docs ${_share}/guide SYMBOLIC)

# --- programs and resources ------------------------------------------------------------------------
set(_programs dstudio decision-viewer)
if(DSTUDIO_BUILD_GUI)
  list(APPEND _programs decision-studio)
endif()
install(TARGETS ${_programs} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS dstudio-probe dstudio-plugin-reader RUNTIME DESTINATION ${DSTUDIO_INSTALL_PRIVATE_LIBDIR})
# Not the goal-reacher's training run (resources/training): it is carried for training to continue,
# and nothing the studio runs reads it.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/resources/ DESTINATION ${DSTUDIO_DATADIR}
        PATTERN "training" EXCLUDE)
# The user guide (Help ▸ User Guide renders it), the documents it links to and their pictures.
file(GLOB _docs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${_docs} DESTINATION ${DSTUDIO_DATADIR}/guide)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/images DESTINATION ${DSTUDIO_DATADIR}/guide)

# --- the desktop ------------------------------------------------------------------------------------
set(DSTUDIO_APP_ID org.decisionstudio.DecisionStudio)
install(FILES ${_linux}/${DSTUDIO_APP_ID}.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES ${_linux}/${DSTUDIO_APP_ID}.metainfo.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
install(FILES ${_linux}/decision-studio-mime.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages RENAME decision-studio.xml)
# The icon: one SVG; the PNG sizes are drawn from it at build time. The build tree holds the SVG
# where the window looks for it beside an installed studio.
install(FILES ${_linux}/icons/decision-studio.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/share/icons/hicolor/scalable/apps)
file(CREATE_LINK ${_linux}/icons/decision-studio.svg ${CMAKE_BINARY_DIR}/share/icons/hicolor/scalable/apps/decision-studio.svg SYMBOLIC)
if(DSTUDIO_BUILD_GUI)
  set(_icon_sizes 16 24 32 48 64 128 256)
  set(_icons_dir ${CMAKE_BINARY_DIR}/packaging/icons)
  add_executable(dstudio_render_icon ${_linux}/render_icon.cpp)
  target_link_libraries(dstudio_render_icon PRIVATE Qt6::Gui Qt6::Svg dstudio_warnings)
  set(_pngs "")
  foreach(size IN LISTS _icon_sizes)
    list(APPEND _pngs ${_icons_dir}/decision-studio-${size}.png)
  endforeach()
  add_custom_command(OUTPUT ${_pngs}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_icons_dir}
    COMMAND dstudio_render_icon ${_linux}/icons/decision-studio.svg ${_icons_dir} ${_icon_sizes}
    DEPENDS dstudio_render_icon ${_linux}/icons/decision-studio.svg VERBATIM)
  add_custom_target(dstudio_icons ALL DEPENDS ${_pngs})
  foreach(size IN LISTS _icon_sizes)
    install(FILES ${_icons_dir}/decision-studio-${size}.png
            DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps RENAME decision-studio.png)
  endforeach()
endif()

# --- documents ----------------------------------------------------------------------------------
set(_doc ${CMAKE_INSTALL_DATADIR}/doc/decision-studio)
install(FILES ${_linux}/copyright DESTINATION ${_doc})
install(FILES ${_linux}/lintian-overrides DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME decision-studio)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/plugins/ DESTINATION ${_doc}/examples/plugins)
# Debian wants its changelog compressed reproducibly (no name, no time stamp).
set(_changelog ${CMAKE_BINARY_DIR}/packaging/changelog.Debian.gz)
add_custom_command(OUTPUT ${_changelog}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/packaging
  COMMAND gzip -9n -c ${_linux}/changelog > ${_changelog}
  DEPENDS ${_linux}/changelog VERBATIM)
add_custom_target(dstudio_changelog ALL DEPENDS ${_changelog})
install(FILES ${_changelog} DESTINATION ${_doc})

# --- man pages from --help ------------------------------------------------------------------------
# help2man runs each program's --help and --version (no display needed); dstudio's page gains a
# COMMANDS section with every subcommand's --help.
find_program(HELP2MAN help2man)
if(HELP2MAN)
  set(_man ${CMAKE_BINARY_DIR}/man)
  set(_pages "")
  set(_name_dstudio "offline-RL datasets, sequence models, their training and analyses from the command line")
  set(_name_decision-studio "a studio for return-conditioned sequence models in offline reinforcement learning")
  set(_name_decision-viewer "a checkpoint's policy acting live in its MuJoCo task, beside its attention")
  foreach(prog IN LISTS _programs)
    set(_page ${_man}/${prog}.1.gz)
    add_custom_command(OUTPUT ${_page}
      COMMAND ${CMAKE_COMMAND} -E env QT_QPA_PLATFORM=offscreen
              bash ${_linux}/man-page.sh $<TARGET_FILE:${prog}> ${_page} "${_name_${prog}}" ${_linux}/man-${prog}.h2m
      DEPENDS ${prog} ${_linux}/man-page.sh ${_linux}/man-${prog}.h2m
      COMMENT "Man page of ${prog}" VERBATIM)
    list(APPEND _pages ${_page})
  endforeach()
  add_custom_target(dstudio_man_pages ALL DEPENDS ${_pages})
  install(FILES ${_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "help2man not found: no man pages (packaging/setup.sh installs it)")
endif()
