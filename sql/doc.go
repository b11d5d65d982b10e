// Package sql parses the SQL statements deltavacuum accepts, as data engineers paste them
// from Fabric and Databricks notebooks, into typed values; it does no I/O and executes
// nothing.
//
// The supported statements, with keywords matched case-insensitively, are:
//
//	VACUUM table [LITE | FULL] [USING INVENTORY inventory] [RETAIN n HOURS] [DRY RUN]
//	SET [key [= value]]
//	RESET [key]
//	ALTER TABLE table SET TBLPROPERTIES (key [=] value, ...)
//	ALTER TABLE table UNSET TBLPROPERTIES [IF EXISTS] (key, ...)
//	SHOW TBLPROPERTIES table [(key)]
//	SHOW TABLES [{IN | FROM} schema]                               (the tables of a lakehouse)
//	{DESCRIBE | DESC} HISTORY table [LIMIT n]
//	{DESCRIBE | DESC} DETAIL table
//	INSPECT table [LITE] [RETAIN n HOURS]                          (deltavacuum extension)
//	EXPLAIN VACUUM table [RETAIN n HOURS] PATHS ('path', ...)      (deltavacuum extension)
//
// The VACUUM clauses may come in any order, each at most once. A table is a name of one
// to three parts (catalog.schema.table), a quoted path ('/data/t'), or a path in
// backquotes after a format (delta.`/data/t`); unlike Spark, every statement accepts
// all three. An inventory is a table or a parenthesised query of the form
//
//	(SELECT * | column, ... FROM table [WHERE condition])
//
// whose condition is a small expression language (comparisons, LIKE, IN, IS NULL,
// AND, OR, NOT) that [Expr.Eval] evaluates with SQL's three-valued logic.
//
// Lexical rules follow Spark SQL. Identifiers are runs of ASCII letters, digits and
// underscores that are not numbers, or any text in backquotes, where two backquotes
// stand for one. String literals are in single or double quotes, with Spark's
// backslash escapes; a doubled quote inside a literal is accepted as well. Comments
// run from -- to the end of the line, or from /* to */ (they nest). [ParseScript]
// splits a script at the semicolons outside literals and comments.
//
// Every statement's String method prints a canonical form that parses back to an equal
// value.
package sql
