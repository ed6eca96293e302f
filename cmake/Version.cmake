# The one place the semantic version lives.
set(DATAECHO_VERSION 0.1.0)
