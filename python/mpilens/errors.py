"""The one exception type for failures a user can cause and fix."""


class MpilensError(Exception):
    """An expected failure; its message is one line meant for the user, shown without traceback."""
