# A Warren network managed with Terraform or OpenTofu: the policy, a reusable auth key for CI
# runners, an API key for a deployment pipeline, a user, the approved routes of a subnet
# router, a webhook, and the network's settings. See README.md to run it against a local `warren serve`.

terraform {
  # The policy's filename is a write-only argument (Terraform 1.11 or OpenTofu 1.11 and later).
  required_version = ">= 1.11"
  required_providers {
    warren = {
      source = "warrenhq/warren"
    }
  }
}

# url and api_key default to WARREN_URL and WARREN_API_KEY.
provider "warren" {}

variable "gateway_device_id" {
  description = "Id (dev_…) of a device that advertises 10.20.0.0/24 and 10.20.1.0/24; empty: no route approvals."
  type        = string
  default     = ""
}

variable "gateway_routes" {
  description = "The routes of the gateway to approve; every other approved route of it is disabled."
  type        = set(string)
  default     = ["10.20.0.0/24"]
}

variable "webhook_url" {
  description = "An https endpoint of yours that receives device and policy events; empty: no webhook."
  type        = string
  default     = ""
}

resource "warren_policy" "this" {
  content  = file("${path.module}/policy.hujson")
  filename = "policy.hujson" # named in the policy's errors: policy.hujson:7:15: …
}

resource "warren_user" "ana" {
  login_name   = "ana@example.com"
  display_name = "Ana"
  role         = "network-admin"
}

# Every CI runner enrolls with this key, tagged tag:ci, and leaves the network 10 minutes
# after it goes offline.
resource "warren_auth_key" "ci" {
  reusable    = true
  ephemeral   = true
  tags        = ["tag:ci"]
  expires_in  = "30d"
  description = "CI runners"

  # tag:ci must be in the policy's tagOwners before a key may carry it.
  depends_on = [warren_policy.this]
}

# The deployment pipeline reads devices and manages their tags.
resource "warren_api_key" "deploy" {
  name       = "deploy-pipeline"
  scopes     = ["read", "devices"]
  expires_in = "30d"
}

# Devices coming and going and policy changes, delivered to your receiver and signed with
# the secret below (Standard Webhooks).
resource "warren_webhook" "ops" {
  count       = var.webhook_url == "" ? 0 : 1
  url         = var.webhook_url
  events      = ["device.*", "policy.updated"]
  description = "Ops alerts"
}

# The network's settings: a login lasts 90 days, and devices resolve the office's names through
# its resolver. Settings left out (device approval, MagicDNS, the nameservers, …) keep the
# values they have; destroying this leaves the settings as they are.
resource "warren_network_settings" "this" {
  node_key_expiry = "90d"
  dns = {
    search_domains = ["office.example"]
    split_dns = {
      "office.example" = ["10.20.0.53"]
    }
  }
}

resource "warren_device_routes" "gateway" {
  count     = var.gateway_device_id == "" ? 0 : 1
  device_id = var.gateway_device_id
  approved  = var.gateway_routes
}

data "warren_network" "this" {
  # Read after the user exists, so the usage in the output counts it.
  depends_on = [warren_user.ana]
}

data "warren_devices" "ci" {
  tags       = ["tag:ci"]
  depends_on = [warren_auth_key.ci]
}

output "network" {
  value = "${data.warren_network.this.name} (${data.warren_network.this.plan}): ${data.warren_network.this.usage.devices} devices, ${data.warren_network.this.usage.users} users"
}

output "ci_runners" {
  value = [for d in data.warren_devices.ci.devices : d.name]
}

output "ci_auth_key" {
  value     = warren_auth_key.ci.key
  sensitive = true
}

output "deploy_api_key" {
  value     = warren_api_key.deploy.key
  sensitive = true
}

# Known only from the apply that created the webhook: give it to the receiver then.
output "ops_webhook_secret" {
  value     = one(warren_webhook.ops[*].secret)
  sensitive = true
}
