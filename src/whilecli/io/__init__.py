"""One reading layer for every command (DESIGN section 1).

``sources`` expands paths, directories, globs and stdin into files of a known kind and finds
their sidecars; ``formats/`` recognises the tool that wrote a file (one module per tool);
``aliases`` is the one table of where each canonical field is found; ``shape`` records the keys
an input carries and builds the polars expressions that read them; ``plan`` resolves each
canonical field of one file; ``read`` reads rows into the canonical frame (:class:`rows.Rows`)
and ``locate`` names the file, line or row and field of a bad value; ``table`` reads rows
with every input column beside the canonical ones (the row methods); ``batch`` reads per-token
lists into the columns the update's padded tensors are built from.
"""
