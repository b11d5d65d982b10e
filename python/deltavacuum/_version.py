# Replaced in every built wheel and sdist by the version of the build (python/_build/dvbuild.py).
__version__ = "0.0.0.dev0+source"
__git_version__ = ""
