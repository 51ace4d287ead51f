"""The forwarding models and the two LPs over them (docs/method.md §3, §4, §4b).

- :mod:`.oracles`: what a model is to a column generation, shared by both LPs: pricing per
  model, arc usage of columns (sr and concrete paths), the one tolerance, the one capacity
  unit, the column key;
- :mod:`.maxflow` (+ :mod:`.maxflow_models`, :mod:`.colgen`, :mod:`.problem`): the max-flow LP
  (:func:`~.maxflow.max_flow`);
- :mod:`.mlu`: the minimum max-link-utilisation LP (:func:`~.mlu.min_mlu`);
- :mod:`.unsplit`: one sr-path per demand from the min-MLU LP (``sr-unsplit``);
- :mod:`.demands`: demand matrices (REPETITA's, or gravity and uniform drawn and scaled to
  ECMP's MLU);
- :mod:`.subflows`: hashed subflows (``mptcp``).

Import from the module that defines a name (``from tpcstudy.models.maxflow import max_flow``).
"""
