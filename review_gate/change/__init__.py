"""Reading a change: what git says (``git``), the unified-diff parser (``diff_parser``), blob
content (``blobs``), what bytes are (``text_or_binary``, ``binary_formats``), binary sections
read again (``binary_sections``, ``binary_patches``), files written as added or removed whole
(``whole_file_diff``), scripts' ``#!`` lines (``shebang``), submodules followed
(``submodules``), the gate's own files (``own_files``), the inputs a user names
(``input_files``) and what the change is for (``intent``)."""
