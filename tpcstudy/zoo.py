"""The Internet Topology Zoo: manifest, fetching, local mirrors, ``zoo`` / ``zoo/NAME`` specs.

The 261 canonical GML files are not shipped with tpcstudy (CC BY 4.0 data, fetched on the user's
machine). ``tpcstudy zoo fetch`` installs them from the Zoo's long-term store at a pinned revision,
or from a local mirror folder; every file is checked against the manifest (SHA256) and the set is
installed atomically: a bad or missing file leaves nothing half-installed.
"""
