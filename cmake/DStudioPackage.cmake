# The Debian package (CPack's DEB generator): `bash packaging/build-deb.sh` builds it as
# decision-studio_<version>-<release>_<arch>.deb. Dependencies are computed from the binaries
# (dpkg-shlibdeps); the fields below are what lintian asks of a package beyond that.

set(DSTUDIO_PACKAGE_MAINTAINER "Decision Studio maintainers <maintainers@decisionstudio.org>"
    CACHE STRING "The Debian package's Maintainer field")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME decision-studio)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "Decision Studio")
set(CPACK_PACKAGE_CONTACT "${DSTUDIO_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "studio for return-conditioned sequence models in offline RL")
set(CPACK_PACKAGE_DESCRIPTION "\
Decision Studio is a desktop studio for people who study the Decision
Transformer and its successors (Decision ConvFormer, Gaussian-biased DT,
unified-token UDT/UDC, Decision HiFormer) in offline reinforcement learning.
It reads D4RL and Minari datasets and checkpoints, trains any model variant
on LibTorch, and shows attention maps, attention entropy against reward,
t-SNE of merged tokens, modality-zeroing ablations and target-return sweeps
next to a live MuJoCo viewer. Figures export at the sizes of the major
venues.
.
The package holds the window (decision-studio), the command line (dstudio),
the live viewer (decision-viewer), the shipped checkpoints and behaviour
policies, the lessons, and the SDK for plugins.")
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# dpkg-shlibdeps finds the studio's own libraries in the package's private folder.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_BINARY_DIR}/lib)
# LibTorch runs about 5x slower on the reference BLAS; ffmpeg records MP4 from the viewer; a
# virtual X server lets `dstudio render` and the screenshots run without a display.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libopenblas0-pthread | libblas3, ffmpeg")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "xvfb, slurm-client")
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
set(CPACK_STRIP_FILES ON)
set(CPACK_OUTPUT_FILE_PREFIX ${CMAKE_BINARY_DIR}/package)
# Only what `cmake --install` puts (no source tree, no test binaries).
set(CPACK_SOURCE_GENERATOR "")

# The changelog's newest entry names the package's version.
file(STRINGS ${PROJECT_SOURCE_DIR}/packaging/linux/changelog _changelog_head LIMIT_COUNT 1)
if(NOT _changelog_head MATCHES "^decision-studio \\(${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}\\) ")
  message(FATAL_ERROR "packaging/linux/changelog starts with '${_changelog_head}', not version "
                      "${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}: add an entry for it")
endif()

include(CPack)
