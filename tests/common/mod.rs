//! Helpers shared by the integration tests.
pub mod chats;
pub mod convert;
pub mod corpus;
pub mod rules;
