-- Weekly restaurant payouts, recorded once the provider has paid them.
CREATE TABLE payouts (
  restaurant_id bigint NOT NULL,
  week          text   NOT NULL,
  amount_paise  bigint NOT NULL CHECK (amount_paise > 0),
  provider_id   text   NOT NULL,
  PRIMARY KEY (restaurant_id, week)
);
