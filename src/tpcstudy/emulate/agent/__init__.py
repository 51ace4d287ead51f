"""The emulator's second layer: the traffic agent (it imports the network layer, never the
experiments).

- :mod:`~.protocol`: every message between the emulator and its agent processes, as
  dataclasses both sides use (one line of JSON each, checked field by field);
- :mod:`~.child`: the agent process (``python -m tpcstudy.emulate.agent``): one event loop, a
  receiver and a sender role over one connection object; it imports about a dozen modules;
- :mod:`~.tcp`: ``TCP_INFO`` and the TPC agent's path changers (NRTOChanger, TimeoutChanger);
- :mod:`~.client`: the emulator's side: start the agents, hand them their jobs and the run's
  times, collect what they measured.
"""
