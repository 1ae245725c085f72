//! tensormap tx
