"""A session without a terminal: what a session is and does, for every front-end.

``SessionController`` (``controller``; its read side in ``reading``) is the one interface:

  open       ``SessionController.open``: new, --continue, --resume, --fork; under the
             session's lease (``SessionBusy`` when another live process holds it)
  tasks      ``run_task`` -> ``TaskEnd``; ``cancel`` (as Ctrl-C); ``compact`` -> why not,
             or None; ``pin``; ``rewind`` / ``rewind_points``; ``shell_command``
  settings   ``set_model``, ``set_max_turns``, ``set_recording``
  reading    ``conversation``, ``session_id``, ``run_id``, ``policy``, ``usage``,
             ``session_usage``, ``context_estimate``, ``window_in_use``, ``take_notes`` ...
  end        ``clear`` (a new session here), ``close``

A front-end (the terminal chat, ``-p``, later ACP) gets values back and supplies ports
(``ports``): the ``FrontEnd`` told and asked while a task runs (approvals, the streamed
answer, a project's MCP server), ``EventObserver``s for the run's events, ``ToolHooks``
around each tool call, and where to ``Tell`` what opening did. A goal is a loop of
``run_task`` and a check of its ``TaskEnd``; nothing needs the controller's insides.

Inside: ``opening`` (which session, its lease, policy, sandbox), ``hold`` (the session this
run writes), ``loading`` (reading it back), ``recording`` (the run's events), ``workbench``
(the live parts tasks run with, and the agent made from them), ``servers`` (MCP),
``window``, ``policy``, ``seat`` (what a session puts between the loop and the front-end).
"""
