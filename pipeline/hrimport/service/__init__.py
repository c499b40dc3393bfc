"""The platform seam: everything that knows the vendor's HTTP API, and nothing else does.

- ``client``: the platform's five endpoints over one injected ``httpx.Client``, with retries; the one
  place where httpx's exceptions and the service's error answers become ``hrimport.errors``' exceptions.
- ``connection``: where to connect (base URL, token, customer id) and the ``Target`` an import sends to.
- ``staff``: the staff request bodies and bulk staff submission, one ``RowOutcome`` per record.
- ``timeoff``: the time-off request body and posting with bounded concurrency.
- ``answers``: what the service's answers mean (its message strings, which refusals split a batch).

The stages (reader, mapper, validator, reporter) know nothing of the platform; the use cases hand their
plain rows to this package. A second platform would be a sibling package with the same shape, not a
rewrite. The sandbox imitates this platform; this package imports it only inside ``open_target`` and
``service_key``, when no service is configured and the embedded sandbox (``hrimport.sandbox.embedded``)
stands in for it.
"""
