"""A session without a terminal: what a session is and does, for every front-end.

``SessionController`` (``controller``) opens a session (new, continued, resumed or forked,
under its lease), runs tasks, compacts, pins, rewinds, switches model or turn budget,
reports usage and closes. A front-end (the terminal chat, ``-p``, later ACP) drives it and
gets values back (``TaskEnd``, events through observers, frozen records); what the session
must ask or tell someone goes through the ports the front-end supplies (``ports``).
"""
