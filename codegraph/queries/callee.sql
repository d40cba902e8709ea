-- API errors (missing, extra or unknown arguments; no return value): the definition the call
-- resolves to, its full signature and parameters, and its source when it is short.
-- $qualname, $limit
SELECT s.qualname, s.kind, s.name, s.signature, s.docstring, s.path, s.start_line,
       NULL AS import_line, 1.0 AS score, 'exact' AS match,
       (SELECT list(p.name || ':' || p.kind ORDER BY p.position) FROM all_parameters p WHERE p.owner_id = s.id) AS parameters,
       CASE WHEN s.end_line - s.start_line <= 12 THEN coalesce(m.source, g.source) END AS source
FROM all_symbols s
LEFT JOIN all_members m ON m.id = s.id
LEFT JOIN all_globals g ON g.id = s.id
WHERE s.qualname = $qualname
LIMIT $limit;
