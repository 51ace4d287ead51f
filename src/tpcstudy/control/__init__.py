"""The controller (``tpcstudy control``): link events in, each host's table recomputed for
the changed topology and pushed atomically (:mod:`.events`, :mod:`.tables`, :mod:`.push`,
:mod:`.run`)."""
