//! Passes over the `comm` dialect's values.

pub mod verify_requests;
