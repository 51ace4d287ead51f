"""``python -m tpcstudy.emulate.agent``: one traffic agent process (:mod:`.child`)."""

from .child import main

raise SystemExit(main())
