-- API errors (missing, extra or unknown arguments; no return value): the definition the call
-- resolves to, its full signature and parameters, and its source when it is short.
-- $qualname, $limit
SELECT s.qualname, s.kind, s.name, s.signature, s.docstring, s.path, s.start_line,
       NULL AS import_line, 1.0 AS score, 'exact' AS match,
       (SELECT list(p.name || ':' || p.kind ORDER BY p.position) FROM parameters p WHERE p.owner_id = s.id) AS parameters,
       CASE WHEN s.end_line - s.start_line <= 12 THEN coalesce(m.source, g.source) END AS source
FROM symbols s
LEFT JOIN members m ON m.id = s.id
LEFT JOIN globals g ON g.id = s.id
WHERE s.qualname = $qualname
LIMIT $limit;
