# Sourced by the scripts that compile: lets every clone of this repository (CI's fresh
# clones in other folders too) share ccache's results. Paths under the clone are hashed
# relative to it, and the precompiled header does not make every translation unit
# uncacheable.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(pwd)}"
export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"
