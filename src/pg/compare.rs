//! `dbio pg compare`.
