-- Java: a class javac cannot find (`symbol: class Helper`): the classes of that name, then those
-- spelled near it, the repository's, then the library layer's and the JDK's ($external, for a graph
-- without the layer), each with the `import` line to write (none in the candidate's own package or
-- java.lang).
-- $name: the simple name; $package: the candidate's package; $external: JDK class qualnames; $limit
WITH classes AS (
    SELECT qualname, kind, name, docstring, path, start_line, layer,
           regexp_extract(module, '^(.*)\.[^.]+$', 1) AS package, array_to_string(bases, ', ') AS bases
    FROM all_classes WHERE ends_with(path, '.java') AND NOT contains(qualname, '$')
), jdk AS (
    SELECT replace(q, '$', '.') AS qualname, regexp_extract(q, '([^.$]+)$', 1) AS name,
           regexp_extract(q, '^(.*)\.[^.]+$', 1) AS package
    FROM unnest(CAST($external AS VARCHAR[])) AS t(q)
)
SELECT * FROM (
    SELECT qualname, kind, name, CASE WHEN bases <> '' THEN ' extends ' || bases END AS signature, docstring, path,
           start_line, CASE WHEN package NOT IN ($package, 'java.lang') THEN 'import ' || qualname || ';' END
           AS import_line,
           CASE WHEN name = $name AND layer = 'project' THEN 1.0 + 0.01 * (package = $package)::INT
                WHEN name = $name THEN 0.995  -- the library layer's (the JDK's, a jar's) after the repository's
                ELSE jaro_winkler_similarity(lower(name), lower($name)) - 0.01 * (layer <> 'project')::INT END AS score,
           CASE WHEN name = $name THEN 'exact' ELSE 'fuzzy' END AS match
    FROM classes WHERE name = $name OR jaro_winkler_similarity(lower(name), lower($name)) >= 0.85
    UNION ALL
    SELECT qualname, 'class', name, NULL, NULL, NULL, NULL,
           CASE WHEN package <> 'java.lang' THEN 'import ' || qualname || ';' END,
           CASE WHEN name = $name THEN 0.995 ELSE jaro_winkler_similarity(lower(name), lower($name)) - 0.01 END,
           CASE WHEN name = $name THEN 'exact' ELSE 'fuzzy' END
    FROM jdk WHERE (name = $name OR jaro_winkler_similarity(lower(name), lower($name)) >= 0.9)
      AND qualname NOT IN (SELECT qualname FROM classes)  -- in the graph already (its library layer)
)
ORDER BY score DESC, qualname
LIMIT $limit;
