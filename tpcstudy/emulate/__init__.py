"""``tpcstudy emulate``: the study's paths on a real Linux SRv6 data plane.
"""
