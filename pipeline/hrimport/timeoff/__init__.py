"""The time-off import (issue 5): leave records from a spreadsheet to the platform's time-off endpoint.

Modules, one job each:

- ``settings``: the ``[timeoff]`` keys beyond the column map (``lang``, ``default_country``, half-day columns);
- ``leave_types``: English/Chinese leave-type names -> the platform's names, ``lang``, closest names;
- ``halves``: half-day markers -> ``is_half_start_date`` / ``is_half_end_date``;
- ``rows``: per-row checks and overlaps within the file;
- ``days``: ``total_days`` from the calculation endpoint, each distinct period asked once;
- ``table``: the valid rows of a file kept as compact columns until they are settled and posted;
- ``post``: posting with bounded concurrency.

The composition, ``import_timeoff``, is a use case: ``hrimport.imports.timeoff``. The ledger of accepted
records, so a re-run never adds a record twice, is state kept between runs: ``hrimport.state.ledger``.
Import from the modules: this package's ``__init__`` imports nothing, so the small modules stay usable
without pandas and the mapper.
"""
