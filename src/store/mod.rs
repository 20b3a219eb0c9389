//! One session: the entry index, the tree, the leaf, appends, context; the file underneath.
