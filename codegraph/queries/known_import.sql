-- import-error on a module the repository already imports elsewhere: a dependency pylint cannot
-- see (optional, or installed only in the project's own environment), not a hallucination.
-- $module: the dotted module pylint could not import; $limit
SELECT path, line, imported_module, name
FROM imports
WHERE imported_module = $module
LIMIT $limit;
