-- Java: `package a.b does not exist`: the class the import line names ($name) wherever it really
-- is, with the `import` line to write, the repository's first, then the library layer's and the JDK's
-- ($external, for a graph without the layer); then the packages whose name is nearest the missing one.
-- $package: the missing package; $name: the class the import names ('' when none); $external; $limit
WITH packages AS (
    SELECT DISTINCT regexp_extract(qualname, '^(.*)\.[^.]+$', 1) AS package FROM all_modules
    WHERE ends_with(path, '.java')
)
SELECT * FROM (
    SELECT qualname, kind, name, NULL AS signature, docstring, path, start_line,
           'import ' || qualname || ';' AS import_line, 1.0 - 0.005 * (layer <> 'project')::INT AS score,
           'exact' AS match
    FROM all_classes WHERE $name <> '' AND name = $name AND ends_with(path, '.java') AND NOT contains(qualname, '$')
    UNION ALL
    SELECT replace(q, '$', '.'), 'class', $name, NULL, NULL, NULL, NULL, 'import ' || replace(q, '$', '.') || ';',
           0.99, 'exact'
    FROM unnest(CAST($external AS VARCHAR[])) AS t(q) WHERE regexp_extract(q, '([^.$]+)$', 1) = $name
      AND replace(q, '$', '.') NOT IN (SELECT qualname FROM all_classes)  -- in the graph already (its library layer)
    UNION ALL
    SELECT package, 'package', package, NULL, NULL, NULL, NULL, NULL,
           jaro_winkler_similarity(package, $package) - 0.1, 'fuzzy'
    FROM packages WHERE package <> '' AND jaro_winkler_similarity(package, $package) >= 0.8
)
ORDER BY score DESC, qualname
LIMIT $limit;
