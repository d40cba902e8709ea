-- Java: a class javac cannot find (`symbol: class Helper`): the classes of that name, then those
-- spelled near it, the repository's and the JDK's ($external), each with the `import` line to write
-- (none in the candidate's own package or java.lang).
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
           start_line, CASE WHEN package <> $package THEN 'import ' || qualname || ';' END AS import_line,
           CASE WHEN name = $name THEN 1.0 + 0.01 * (package = $package)::INT
                ELSE jaro_winkler_similarity(lower(name), lower($name)) END AS score,
           CASE WHEN name = $name THEN 'exact' ELSE 'fuzzy' END AS match
    FROM classes WHERE name = $name OR jaro_winkler_similarity(lower(name), lower($name)) >= 0.85
    UNION ALL
    SELECT qualname, 'class', name, NULL, NULL, NULL, NULL,
           CASE WHEN package <> 'java.lang' THEN 'import ' || qualname || ';' END,
           CASE WHEN name = $name THEN 0.995 ELSE jaro_winkler_similarity(lower(name), lower($name)) - 0.01 END,
           CASE WHEN name = $name THEN 'exact' ELSE 'fuzzy' END
    FROM jdk WHERE name = $name OR jaro_winkler_similarity(lower(name), lower($name)) >= 0.9
)
ORDER BY score DESC, qualname
LIMIT $limit;
