-- import-error: modules whose dotted name is nearest the one that could not be imported, and
-- top-level definitions named like its last part (`import pkg.Thing` where Thing is a class).
-- $module: the dotted name from the message; $last: its last part; $limit
SELECT * FROM (
    SELECT qualname, 'module' AS kind, name, NULL AS signature, docstring, path, start_line,
           'import ' || qualname AS import_line,
           CASE WHEN name = $last THEN 1.0
                ELSE greatest(jaro_winkler_similarity(lower(qualname), lower($module)),
                              0.98 * jaro_winkler_similarity(lower(name), lower($last)))
                     -- the package that holds the missing module is where to look, not the answer
                     * CASE WHEN starts_with($module, qualname || '.') THEN 0.85 ELSE 1.0 END END AS score,
           CASE WHEN name = $last THEN 'exact' ELSE 'fuzzy' END AS match
    FROM all_modules
    WHERE layer = 'project' OR NOT is_private(qualname)
    UNION ALL
    SELECT qualname, kind, name, signature, docstring, path, start_line,
           'from ' || module || ' import ' || name, 0.99, 'exact'
    FROM all_symbols
    WHERE name = $last AND kind IN ('class', 'function', 'variable') AND qualname = module || '.' || name
)
WHERE score >= 0.75
ORDER BY score DESC, length(qualname), qualname
LIMIT $limit;
