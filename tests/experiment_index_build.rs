mod common;

#[tokio::test]
async fn sandbox_serves_a_session() {
    let lab = common::lab();
    let client = lab.target().connect().await.unwrap();
    let one: i32 = client.query_one("SELECT 1", &[]).await.unwrap().get(0);
    assert_eq!(one, 1);
}
